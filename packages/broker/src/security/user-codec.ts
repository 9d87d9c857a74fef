/** A SCRAM user as stored (users.json on one node, a value in etcd in a cluster): salted keys in base64. */
import { AuthMechanism, type ScramCredential } from '@booblik/protocol';
import { credentialProblem } from './user-rules.js';

export interface StoredUser {
  name: string;
  mechanism: string;
  salt: string;
  iterations: number;
  storedKey: string;
  serverKey: string;
}

export function encodeUser(name: string, c: ScramCredential): StoredUser {
  return {
    name,
    mechanism: AuthMechanism.SCRAM_SHA_256,
    salt: c.salt.toString('base64'),
    iterations: c.iterations,
    storedKey: c.storedKey.toString('base64'),
    serverKey: c.serverKey.toString('base64'),
  };
}

/** The credential, or why the stored form cannot be used. */
export function decodeUser(
  raw: unknown,
): { name: string; credential: ScramCredential } | { problem: string } {
  const u = raw as Partial<StoredUser> | null;
  if (typeof u?.name !== 'string' || u.mechanism !== AuthMechanism.SCRAM_SHA_256)
    return { problem: 'expected a name and mechanism SCRAM-SHA-256' };
  const credential = {
    salt: Buffer.from(String(u.salt), 'base64'),
    iterations: Number(u.iterations),
    storedKey: Buffer.from(String(u.storedKey), 'base64'),
    serverKey: Buffer.from(String(u.serverKey), 'base64'),
  };
  const problem = credentialProblem(u.name, credential);
  return problem === null ? { name: u.name, credential } : { problem };
}
