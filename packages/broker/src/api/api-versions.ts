import { encodeApiVersionsResponse, supportedApiVersions } from '@booblik/protocol';
import type { Reply } from '../reply.js';

const answerRanges = supportedApiVersions();

/** API_VERSIONS v1: every API key this broker serves, with its lowest and highest version. */
export function handleApiVersions(correlationId: number): Reply {
  return encodeApiVersionsResponse(correlationId, answerRanges);
}
