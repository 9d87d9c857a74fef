/**
 * What a broker needs to reach an etcd that asks for TLS or its own authentication, read from the
 * files the configuration names. A file that cannot be read stops the start, naming the key and the
 * file, never its contents.
 */
import fs from 'node:fs';
import net from 'node:net';
import type { BrokerConfig } from '../config/keys.js';
import { ConfigError } from '../errors.js';

export interface EtcdSecurity {
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  auth?: { username: string; password: string };
}

function read(key: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new ConfigError(`${key}: ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
}

export function etcdSecurityOf(c: BrokerConfig): EtcdSecurity {
  const out: EtcdSecurity = {};
  if ((c.clusterEtcdCertFile === '') !== (c.clusterEtcdKeyFile === ''))
    throw new ConfigError(
      'booblik.cluster.etcd.cert.file and booblik.cluster.etcd.key.file: both or neither',
    );
  if (c.clusterEtcdCaFile !== '') {
    if (!c.clusterEtcd.every((e) => e.startsWith('https://')))
      throw new ConfigError(
        'booblik.cluster.etcd: with booblik.cluster.etcd.ca.file every endpoint is https://',
      );
    // The etcd client sends the endpoint's host as the TLS server name, which Node 26 refuses for an
    // IP address: etcd is named by a host name its certificate carries.
    const byIp = c.clusterEtcd.find((e) => net.isIP(new URL(e).hostname.replace(/^\[|\]$/g, '')) !== 0);
    if (byIp !== undefined)
      throw new ConfigError(
        `booblik.cluster.etcd: ${byIp}: over TLS name etcd by a host name in its certificate, not an IP address (the TLS server name cannot be an IP)`,
      );
    out.tls = {
      ca: read('booblik.cluster.etcd.ca.file', c.clusterEtcdCaFile),
      ...(c.clusterEtcdCertFile !== ''
        ? {
            cert: read('booblik.cluster.etcd.cert.file', c.clusterEtcdCertFile),
            key: read('booblik.cluster.etcd.key.file', c.clusterEtcdKeyFile),
          }
        : {}),
    };
  } else if (c.clusterEtcdCertFile !== '') {
    throw new ConfigError('booblik.cluster.etcd.cert.file: needs booblik.cluster.etcd.ca.file (TLS to etcd)');
  }
  if ((c.clusterEtcdUser === '') !== (c.clusterEtcdPasswordFile === ''))
    throw new ConfigError(
      'booblik.cluster.etcd.user and booblik.cluster.etcd.password.file: both or neither',
    );
  if (c.clusterEtcdUser !== '') {
    // One line: a trailing newline (echo > file) is not part of the password.
    const password = read('booblik.cluster.etcd.password.file', c.clusterEtcdPasswordFile)
      .toString('utf8')
      .replace(/\r?\n$/, '');
    if (password === '')
      throw new ConfigError(`booblik.cluster.etcd.password.file: ${c.clusterEtcdPasswordFile} is empty`);
    out.auth = { username: c.clusterEtcdUser, password };
  }
  return out;
}
