/**
 * USERS request v1 => op:int8 name:string [op 2 (UPSERT) only: salt:bytes iterations:int32 storedKey:bytes serverKey:bytes]
 * USERS response v1 (success body) => count:int32 [name:string mechanism:string iterations:int32]*count
 * Error body: INVALID_ARGUMENT
 *
 * The SCRAM users a broker knows. The password never crosses the wire: the client salts and hashes
 * it (RFC 5802's StoredKey and ServerKey), so the broker keeps only what verifies a proof. The
 * answer lists every user after the operation, by name.
 */
import { ApiKey } from '../../api.js';
import { fieldError, readCount, WireReader } from '../../codec/reader.js';
import { stringBytes, WireWriter } from '../../codec/writer.js';
import { ErrorCode } from '../../errors.js';
import { lengthPrefixBytes, requestHeaderBytes, responseHeaderBytes } from '../../limits.js';

export const UsersOp = {
  LIST: 1,
  /** Adds the user, or replaces its credentials. */
  UPSERT: 2,
  REMOVE: 3,
} as const;

export type UsersOpValue = (typeof UsersOp)[keyof typeof UsersOp];

/** RFC 7677 recommends at least 4096 iterations of SHA-256. */
export const scramIterationsMin = 4096;
export const scramSaltBytesMin = 16;
/** SHA-256's output: StoredKey and ServerKey. */
export const scramKeyBytes = 32;
export const userNameBytesMax = 255;

export interface ScramCredential {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

export type UsersRequest =
  | { op: typeof UsersOp.LIST }
  | { op: typeof UsersOp.REMOVE; name: string }
  | { op: typeof UsersOp.UPSERT; name: string; credential: ScramCredential };

export interface UserListing {
  name: string;
  mechanism: string;
  iterations: number;
}

function readKey(reader: WireReader, field: string, bytesMin: number, bytesMax: number): Buffer {
  const length = reader.int32(`${field}.length`);
  if (length < bytesMin || length > bytesMax)
    throw fieldError(
      `${field}.length`,
      length,
      bytesMin === bytesMax ? `${bytesMin}` : `${bytesMin}..${bytesMax}`,
    );
  return Buffer.from(reader.bytes(length, field));
}

/** Decodes the shape; the broker checks the values (a name, iterations) and answers INVALID_ARGUMENT. */
export function decodeUsersRequest(frame: Buffer, payloadStart: number): UsersRequest {
  const reader = new WireReader(frame, payloadStart);
  const op = reader.int8('op');
  const name = reader.string('name');
  switch (op) {
    case UsersOp.LIST:
      return { op };
    case UsersOp.REMOVE:
      return { op, name };
    case UsersOp.UPSERT: {
      const salt = readKey(reader, 'salt', 0, 1024);
      const iterations = reader.int32('iterations');
      const storedKey = readKey(reader, 'storedKey', 0, 1024);
      const serverKey = readKey(reader, 'serverKey', 0, 1024);
      return { op, name, credential: { salt, iterations, storedKey, serverKey } };
    }
    default:
      throw fieldError('op', op, '1 (LIST), 2 (UPSERT) or 3 (REMOVE)');
  }
}

export function encodeUsersRequest(correlationId: number, req: UsersRequest): Buffer {
  const name = req.op === UsersOp.LIST ? '' : req.name;
  const c = req.op === UsersOp.UPSERT ? req.credential : null;
  const payloadBytes =
    1 + stringBytes(name) + (c ? 4 + c.salt.length + 4 + 4 + c.storedKey.length + 4 + c.serverKey.length : 0);
  const w = new WireWriter(lengthPrefixBytes + requestHeaderBytes + payloadBytes);
  w.int32(requestHeaderBytes + payloadBytes)
    .int16(ApiKey.USERS)
    .int16(1)
    .int32(correlationId);
  w.int8(req.op).string(name);
  if (c) {
    w.int32(c.salt.length).bytes(c.salt).int32(c.iterations);
    w.int32(c.storedKey.length).bytes(c.storedKey).int32(c.serverKey.length).bytes(c.serverKey);
  }
  return w.done();
}

export function encodeUsersResponse(correlationId: number, users: readonly UserListing[]): Buffer {
  let bodyBytes = 4;
  for (const u of users) bodyBytes += stringBytes(u.name) + stringBytes(u.mechanism) + 4;
  const w = new WireWriter(lengthPrefixBytes + responseHeaderBytes + bodyBytes);
  w.int32(responseHeaderBytes + bodyBytes)
    .int32(correlationId)
    .int16(ErrorCode.NONE)
    .int32(users.length);
  for (const u of users) w.string(u.name).string(u.mechanism).int32(u.iterations);
  return w.done();
}

export function decodeUsersResponse(body: Buffer): UserListing[] {
  const reader = new WireReader(body);
  const count = readCount(reader, 'count', 2 + 2 + 4);
  const users: UserListing[] = [];
  for (let i = 0; i < count; i++) {
    users.push({
      name: reader.string(`users[${i}].name`),
      mechanism: reader.string(`users[${i}].mechanism`),
      iterations: reader.int32(`users[${i}].iterations`),
    });
  }
  return users;
}
