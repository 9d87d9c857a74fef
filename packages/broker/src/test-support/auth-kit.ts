/** Authenticating a RawClient in broker tests: a whole SCRAM exchange, or its messages one by one. */
import {
  AuthMechanism,
  checkServerFinal,
  clientFinal,
  clientFirst,
  decodeAuthenticateResponse,
  decodeAuthenticationFailed,
  ErrorCode,
  type ResponseFrame,
} from '@booblik/protocol';
import type { RawClient } from './raw-client.js';

export const SCRAM = AuthMechanism.SCRAM_SHA_256;

/** The broker's reason for an AUTHENTICATION_FAILED frame. */
export function failureReason(frame: ResponseFrame): string {
  if (frame.errorCode !== ErrorCode.AUTHENTICATION_FAILED)
    throw new Error(`expected AUTHENTICATION_FAILED, got code ${frame.errorCode}`);
  return decodeAuthenticationFailed(frame.body).reason;
}

/**
 * Runs SCRAM-SHA-256 as `user`: the answer to the client-final (NONE once authenticated, the server
 * signature checked) and what was sent, so a test can replay it.
 */
export async function scramLogin(client: RawClient, user: string, password: string) {
  const first = clientFirst(user);
  const firstAnswer = await client.authenticate(SCRAM, first.message);
  if (firstAnswer.errorCode !== ErrorCode.NONE) return { final: firstAnswer, clientFinalMessage: '' };
  const serverFirst = decodeAuthenticateResponse(firstAnswer.body);
  if (serverFirst.complete) throw new Error('a SCRAM exchange complete after its first message');
  const final = clientFinal(first, serverFirst.data.toString(), password);
  const answer = await client.authenticate(SCRAM, final.message);
  if (answer.errorCode === ErrorCode.NONE)
    checkServerFinal(final, decodeAuthenticateResponse(answer.body).data.toString());
  return { final: answer, clientFinalMessage: final.message };
}
