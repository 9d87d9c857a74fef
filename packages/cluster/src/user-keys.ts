/**
 * Writing SCRAM users to etcd: every broker's copy follows them (KeyspaceCopy.users), so a user added
 * through one broker can log in on every broker once their copies reach the write's revision.
 * Values are opaque here: the broker encodes and checks the credentials.
 */
import type { Etcd3 } from 'etcd3';
import { clusterWriteError } from './etcd-client.js';
import type { Keyspace } from './keyspace.js';

export class UserKeys {
  constructor(
    private readonly client: Etcd3,
    private readonly keyspace: Keyspace,
  ) {}

  /** Puts the user's value; resolves with the write's revision. */
  async put(name: string, value: string): Promise<number> {
    try {
      const response = await this.client.put(this.keyspace.userKey(name)).value(value).exec();
      return Number(response.header.revision);
    } catch (error) {
      throw clusterWriteError(error, `writing user ${name}`);
    }
  }

  /** Puts the user only if it does not exist (the bootstrap user, which brokers may race to make); false if it does. */
  async putIfAbsent(name: string, value: string): Promise<boolean> {
    const key = this.keyspace.userKey(name);
    try {
      const result = await this.client
        .if(key, 'Create', '==', 0)
        .then(this.client.put(key).value(value))
        .commit();
      return result.succeeded;
    } catch (error) {
      throw clusterWriteError(error, `writing user ${name}`);
    }
  }

  /** Deletes the user; resolves with the revision, or null when there was no such user. */
  async delete(name: string): Promise<number | null> {
    try {
      const response = await this.client.delete().key(this.keyspace.userKey(name)).exec();
      return Number(response.deleted) > 0 ? Number(response.header.revision) : null;
    } catch (error) {
      throw clusterWriteError(error, `removing user ${name}`);
    }
  }
}
