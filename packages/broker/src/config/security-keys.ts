/** The keys of the broker's security: authentication, TLS, and how it reaches a secured etcd. */
import { anyString, choice, type KeySpec } from './key-spec.js';

/** Who may connect (docs/security.md): authentication, superusers, token keys. */
export const authKeys = [
  {
    key: 'booblik.auth',
    field: 'auth',
    default: 'off',
    allowed: 'off or required',
    description:
      'required: a connection authenticates (SCRAM-SHA-256 or a token) before anything but API_VERSIONS and AUTHENTICATE',
    parse: (raw) =>
      raw.trim() === 'off' || raw.trim() === 'required' ? (raw.trim() as 'off' | 'required') : undefined,
  } satisfies KeySpec<'auth'>,
  {
    key: 'booblik.auth.superusers',
    field: 'authSuperusers',
    default: '',
    allowed: 'user names separated by commas, or empty',
    description: 'principals that may do everything, managing users included',
    parse: (raw) => {
      const names = raw
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '');
      return new Set(names).size === names.length ? names : undefined;
    },
  } satisfies KeySpec<'authSuperusers'>,
  {
    key: 'booblik.auth.token.keys.file',
    field: 'authTokenKeysFile',
    default: '',
    allowed: 'a file path, or empty (no tokens)',
    description:
      'HS256 keys, one "ID SECRET" per line: the first signs, any verifies; read again when it changes',
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'authTokenKeysFile'>,
] as const;

/** TLS to etcd and etcd's own authentication. */
export const etcdSecurityKeys = [
  {
    key: 'booblik.cluster.etcd.ca.file',
    field: 'clusterEtcdCaFile',
    default: '',
    allowed: 'a file path, or empty',
    description: "TLS to etcd: the PEM CA etcd's certificate must chain to (endpoints then https://)",
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'clusterEtcdCaFile'>,
  {
    key: 'booblik.cluster.etcd.cert.file',
    field: 'clusterEtcdCertFile',
    default: '',
    allowed: 'a file path, or empty',
    description:
      "TLS to etcd: this broker's PEM certificate, for etcd's --client-cert-auth (with the key file)",
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'clusterEtcdCertFile'>,
  {
    key: 'booblik.cluster.etcd.key.file',
    field: 'clusterEtcdKeyFile',
    default: '',
    allowed: 'a file path, or empty',
    description: 'TLS to etcd: the PEM key of that certificate',
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'clusterEtcdKeyFile'>,
  {
    key: 'booblik.cluster.etcd.user',
    field: 'clusterEtcdUser',
    default: '',
    allowed: 'an etcd user name, or empty',
    description:
      "etcd's own authentication: the user the broker connects as (its password in the password file)",
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'clusterEtcdUser'>,
  {
    key: 'booblik.cluster.etcd.password.file',
    field: 'clusterEtcdPasswordFile',
    default: '',
    allowed: 'a file path, or empty',
    description: "the etcd user's password, alone in a file (never on the command line)",
    parse: (raw) => raw.trim(),
  } satisfies KeySpec<'clusterEtcdPasswordFile'>,
] as const;

/** TLS on the broker's ports and between brokers (docs/security.md). */
export const tlsKeys = [
  {
    key: 'booblik.tls',
    field: 'tls',
    default: 'off',
    allowed: 'off, allowed or required',
    description:
      'TLS on the protocol and HTTP ports, told from plaintext by the first byte: allowed serves both, required answers plaintext TLS_REQUIRED',
    parse: choice('off', 'allowed', 'required'),
  } satisfies KeySpec<'tls'>,
  {
    key: 'booblik.tls.cert.file',
    field: 'tlsCertFile',
    default: '',
    allowed: 'empty, or a PEM file (the certificate, then any intermediates)',
    description: "the broker's certificate; reread when it changes",
    parse: anyString,
  } satisfies KeySpec<'tlsCertFile'>,
  {
    key: 'booblik.tls.key.file',
    field: 'tlsKeyFile',
    default: '',
    allowed: 'empty, or a PEM file (unencrypted)',
    description: "the private key of the broker's certificate; reread when it changes",
    parse: anyString,
  } satisfies KeySpec<'tlsKeyFile'>,
  {
    key: 'booblik.tls.ca.file',
    field: 'tlsCaFile',
    default: '',
    allowed: 'empty, or a PEM file of CA certificates',
    description: 'the CAs client certificates are verified against; reread when it changes',
    parse: anyString,
  } satisfies KeySpec<'tlsCaFile'>,
  {
    key: 'booblik.tls.client.auth',
    field: 'tlsClientAuth',
    default: 'none',
    allowed: 'none, requested or required',
    description:
      "client certificates: requested verifies one when given, required refuses a connection without one; the certificate's subject CN is the connection's principal",
    parse: choice('none', 'requested', 'required'),
  } satisfies KeySpec<'tlsClientAuth'>,
] as const;
