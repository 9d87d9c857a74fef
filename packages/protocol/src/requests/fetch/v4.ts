/**
 * FETCH request v4 => as v2.  FETCH response v4 => as v1.
 *
 * The version says the client follows routes and takes reads from replicas: a live in-sync replica
 * may answer it from its own copy, up to the commit offset it knows (its high watermark, which can
 * trail the primary's by a heartbeat), so the client keeps the highest high watermark it has seen. A
 * broker that cannot answer it answers NOT_PRIMARY with the route, as v3.
 */
import { setRequestVersion } from '../../frame/header.js';
import type { FetchRequest } from './v1.js';
import { encodeFetchRequestV2 } from './v2.js';

export function encodeFetchRequestV4(correlationId: number, req: FetchRequest): Buffer {
  return setRequestVersion(encodeFetchRequestV2(correlationId, req), 4);
}
