/** What the broker's configuration is, and how one key of it is described and parsed. */

export interface TopicSpec {
  name: string;
  partitions: number;
}

export interface BrokerConfig {
  dataDir: string;
  port: number;
  bindAddress: string;
  /** `required`: a connection must authenticate before anything but API_VERSIONS and AUTHENTICATE. */
  auth: 'off' | 'required';
  /** User names (or token subjects) that may do everything, USERS included. */
  authSuperusers: string[];
  /** Empty: tokens are refused. */
  authTokenKeysFile: string;
  topics: TopicSpec[];
  segmentBytesMax: number;
  indexIntervalBytes: number;
  flushEveryRecords: number;
  flushEveryMs: number;
  retentionBytes: number;
  retentionMs: number;
  retentionCheckMs: number;
  metricsIntervalMs: number;
  httpPort: number;
  maxConnections: number;
  maxInflightRequests: number;
  tailCacheBytes: number;
  writerQueueBytes: number;
  /** etcd endpoints; empty: one node, no cluster. */
  clusterEtcd: string[];
  /** PEM files for TLS to etcd (https:// endpoints); empty: none. */
  clusterEtcdCaFile: string;
  clusterEtcdCertFile: string;
  clusterEtcdKeyFile: string;
  /** etcd's own authentication: a user, and a file holding its password; empty: none. */
  clusterEtcdUser: string;
  clusterEtcdPasswordFile: string;
  clusterName: string;
  clusterLeaseMs: number;
  defaultReplication: number;
  replicaLagMaxMs: number;
  /** Empty: the id kept in the data directory, or a new one on first start. */
  brokerId: string;
  brokerZone: string;
  /** `host:port` clients and peers dial; empty: the bind address and the protocol port. */
  advertisedAddress: string;
  /** Peer address as advertised -> the address this broker dials for it instead. */
  clusterPeerDial: ReadonlyMap<string, string>;
  localRetentionBytes: number;
  localRetentionMs: number;
  storeCacheBytes: number;
  /** TLS on the protocol and HTTP ports (docs/security.md). */
  tls: TlsMode;
  tlsCertFile: string;
  tlsKeyFile: string;
  /** Empty: client certificates are not verified (then client auth must be none). */
  tlsCaFile: string;
  tlsClientAuth: TlsClientAuth;
}

export type TlsMode = 'off' | 'allowed' | 'required';
export type TlsClientAuth = 'none' | 'requested' | 'required';

export const choice =
  <T extends string>(...choices: T[]) =>
  (raw: string): T | undefined =>
    (choices as string[]).includes(raw.trim()) ? (raw.trim() as T) : undefined;

export const anyString = (raw: string): string => raw.trim();

export interface KeySpec<K extends keyof BrokerConfig> {
  key: string;
  field: K;
  default: string;
  allowed: string;
  description: string;
  parse: (raw: string) => BrokerConfig[K] | undefined;
}
