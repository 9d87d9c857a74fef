/**
 * Turns on etcd's own authentication for a test: a root user (etcd requires one), and a user whose
 * role may read and write the given prefix only, as an operator would set one up for booblik.
 */
import { Etcd3, Range } from 'etcd3';

export async function enableEtcdAuth(
  endpoint: string,
  user: { name: string; password: string; prefix: string },
): Promise<void> {
  const client = new Etcd3({ hosts: [endpoint] });
  try {
    await client.user('root').create(`root-${user.password}`);
    await client.role('root').create();
    await client.user('root').addRole('root');
    await client.role(`${user.name}-role`).create();
    await client
      .role(`${user.name}-role`)
      .grant({ permission: 'Readwrite', range: Range.prefix(user.prefix) });
    await client.user(user.name).create(user.password);
    await client.user(user.name).addRole(`${user.name}-role`);
    await client.auth.authEnable();
  } finally {
    client.close();
  }
}
