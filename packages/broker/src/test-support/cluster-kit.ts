/**
 * A cluster on loopback for tests: a real etcd (the cluster package's test kit) and broker
 * processes started from the real entry point, each with its own data directory, ports chosen at
 * run time, stopped by pid. A broker can be SIGKILLed, SIGSTOPped and restarted on its data. With
 * `faultLinks`, every broker-to-etcd and broker-to-broker link runs through a fault proxy.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type EtcdServer, enableEtcdAuth, startEtcd } from '@booblik/cluster/testing';
import {
  type FaultProxy,
  makeCertificates,
  type ReservedPort,
  reservePorts,
  startProcess,
  type WatchedProcess,
} from '@booblik/testkit';
import { type FaultLinks, startFaultLinks } from './fault-links.js';

export interface KitBroker {
  readonly name: string;
  readonly zone: string;
  readonly dataDir: string;
  /** `127.0.0.1:<port>` once started. */
  address: string;
  port: number;
  httpPort: number;
  process: WatchedProcess | undefined;
  /** Starts (or restarts) the broker on its data directory and its port; resolves once it listens. */
  start(extra?: string[]): Promise<void>;
  /** SIGKILL by pid, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM by pid, and wait for the exit. */
  stop(): Promise<void>;
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

export interface ClusterKit {
  etcd: EtcdServer;
  cluster: string;
  brokers: KitBroker[];
  /** The proxy on `brokers[index]`'s link to etcd (with `faultLinks`). */
  etcdLink(index: number): FaultProxy;
  /** The proxy on the link `brokers[from]` dials `brokers[to]` over (with `faultLinks`). */
  peerLink(from: number, to: number): FaultProxy;
  /** Stops every broker, every proxy and etcd, removes every directory. */
  cleanup(): Promise<void>;
}

export interface ClusterKitOptions {
  brokers?: number;
  leaseMs?: number;
  /** Extra flags for every broker. */
  flags?: string[];
  /** Environment of every broker besides PATH (BOOBLIK_BOOTSTRAP_USER, say). */
  env?: Record<string, string>;
  /** etcd with its own authentication on: the brokers connect as this user (a role on the cluster's prefix). */
  etcdUser?: { name: string; password: string };
  /** etcd with TLS and client certificates required: the brokers connect with the test CA and a client certificate. */
  etcdTls?: boolean;
  /** false: the test starts each broker itself (to choose the order and flags). */
  start?: boolean;
  /**
   * A fault proxy on each broker's etcd link and on each ordered pair of brokers' link; the
   * brokers' ports are then chosen before they start (their peers dial them through proxies).
   */
  faultLinks?: boolean;
}

let clusters = 0;

export async function startClusterKit(options: ClusterKitOptions = {}): Promise<ClusterKit> {
  const certCleanups: (() => unknown)[] = [];
  const certs = options.etcdTls
    ? await makeCertificates({ after: (f) => void certCleanups.push(f as () => unknown) })
    : null;
  const etcdTls = certs && {
    certFile: certs.server.cert,
    keyFile: certs.server.key,
    caFile: certs.ca,
    clientCertFile: certs.client.cert,
    clientKeyFile: certs.client.key,
  };
  const etcd = await startEtcd(etcdTls ? { tls: etcdTls } : {});
  const etcdTlsFlags = etcdTls
    ? [
        `--cluster.etcd.ca.file=${etcdTls.caFile}`,
        `--cluster.etcd.cert.file=${etcdTls.clientCertFile}`,
        `--cluster.etcd.key.file=${etcdTls.clientKeyFile}`,
      ]
    : [];
  const count = options.brokers ?? 3;
  let links: FaultLinks | undefined;
  // Each broker's protocol and HTTP ports, chosen now and held until it starts, so a restart takes
  // the same ones and a fault proxy can be started towards them first.
  let ports: ReservedPort[] = [];
  try {
    ports = await reservePorts(2 * count);
    if (options.faultLinks) {
      links = await startFaultLinks(
        etcd.clientPort,
        Array.from({ length: count }, (_, i) => ports[2 * i]!.port),
      );
    }
  } catch (error) {
    await Promise.all(ports.map((p) => p.release()));
    await etcd.cleanup();
    throw error;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-cluster-'));
  const cluster = `kit${process.pid}x${++clusters}`;
  const etcdAuthFlags: string[] = [];
  if (options.etcdUser !== undefined) {
    await enableEtcdAuth(etcd.endpoint, { ...options.etcdUser, prefix: `/${cluster}/` });
    const passwordFile = path.join(root, 'etcd-password');
    fs.writeFileSync(passwordFile, `${options.etcdUser.password}\n`, { mode: 0o600 });
    etcdAuthFlags.push(
      `--cluster.etcd.user=${options.etcdUser.name}`,
      `--cluster.etcd.password.file=${passwordFile}`,
    );
  }
  const brokers: KitBroker[] = [];
  const zones = ['a', 'b', 'c'];
  for (let i = 0; i < count; i++) {
    const broker = kitBroker(
      `b${i + 1}`,
      zones[i % zones.length]!,
      path.join(root, `b${i + 1}`),
      [
        // Over TLS etcd is named by a host name of its certificate (etcd-security.ts).
        ...(links?.flagsOf(i) ?? [
          `--cluster.etcd=${etcdTls ? etcd.endpoint.replace('127.0.0.1', 'localhost') : etcd.endpoint}`,
        ]),
        `--cluster.name=${cluster}`,
        `--cluster.lease.millis=${options.leaseMs ?? 2000}`,
        '--metrics.interval.millis=0',
        ...etcdAuthFlags,
        ...etcdTlsFlags,
        ...(options.flags ?? []),
      ],
      [ports[2 * i]!, ports[2 * i + 1]!],
      options.env ?? {},
    );
    brokers.push(broker);
  }
  const withLinks = (): FaultLinks => {
    if (links === undefined) throw new Error('the cluster kit was started without faultLinks');
    return links;
  };
  try {
    // One after another: b1 is the oldest member, the allocator's first leader.
    if (options.start !== false) for (const b of brokers) await b.start();
  } catch (error) {
    await cleanup();
    throw error;
  }
  async function cleanup(): Promise<void> {
    await Promise.all(brokers.map((b) => b.kill().catch(() => {})));
    await Promise.all(ports.map((p) => p.release()));
    await links?.close();
    await etcd.cleanup();
    for (const f of certCleanups) await f();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return {
    etcd,
    cluster,
    brokers,
    etcdLink: (index) => withLinks().etcdLink(index),
    peerLink: (from, to) => withLinks().peerLink(from, to),
    cleanup,
  };
}

function kitBroker(
  name: string,
  zone: string,
  dataDir: string,
  flags: string[],
  reserved: readonly [ReservedPort, ReservedPort],
  env: Record<string, string>,
): KitBroker {
  const broker: KitBroker = {
    name,
    zone,
    dataDir,
    address: '',
    port: reserved[0].port,
    httpPort: reserved[1].port,
    process: undefined,
    async start(extra = []) {
      await Promise.all(reserved.map((r) => r.release()));
      const p = startProcess(
        [
          `--data.dir=${dataDir}`,
          `--port=${broker.port}`,
          `--http.port=${broker.httpPort}`,
          `--broker.id=${name}`,
          `--broker.zone=${zone}`,
          ...flags,
          ...extra,
        ],
        env,
      );
      broker.process = p;
      broker.port = await p.listening;
      broker.httpPort = p.httpPort();
      broker.address = `127.0.0.1:${broker.port}`;
    },
    async kill() {
      const p = broker.process;
      if (p === undefined || p.proc.exitCode !== null || p.proc.signalCode !== null) return;
      process.kill(p.proc.pid!, 'SIGKILL');
      await p.exited;
    },
    async stop() {
      const p = broker.process;
      if (p === undefined || p.proc.exitCode !== null || p.proc.signalCode !== null) return;
      process.kill(p.proc.pid!, 'SIGTERM');
      await p.exitCode(30_000);
    },
    signal(signal) {
      const pid = broker.process?.proc.pid;
      if (pid !== undefined) process.kill(pid, signal);
    },
  };
  return broker;
}

/** PRODUCE and FETCH requests a broker forwarded to their primaries so far (from its /metrics). */
export async function proxiedRequests(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^booblik_proxied_requests_total\{api="(produce|fetch)"\} (\d+)/gm)) {
    total += Number(m[2]);
  }
  return total;
}

/** FETCH v4 requests a broker answered from its own copy as an in-sync replica (from its /metrics). */
export async function replicaReads(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const m = /^booblik_fetch_replica_reads_total (\d+)/m.exec(text);
  if (m === null) throw new Error('booblik_fetch_replica_reads_total missing from /metrics');
  return Number(m[1]);
}
