/**
 * The links of a test cluster, each behind a fault proxy: one per broker in front of etcd, and one
 * per ordered pair of brokers (from -> to). A broker dials etcd through its own proxy
 * (`--cluster.etcd`) and each peer through the pair's proxy (`--cluster.peer.dial`), so a test can
 * delay, cut or black-hole any one link and leave the others alone.
 */
import { type FaultProxy, startFaultProxy } from '@booblik/testkit';

export interface FaultLinks {
  /** The protocol port each broker must listen on: its peers' proxies were started towards it. */
  readonly ports: readonly number[];
  /** Broker `index`'s flags: its etcd endpoint and its peers' dial addresses. */
  flagsOf(index: number): string[];
  etcdLink(index: number): FaultProxy;
  peerLink(from: number, to: number): FaultProxy;
  close(): Promise<void>;
}

/**
 * `ports`: the protocol port each broker will listen on (reserved by the caller until it starts):
 * advertised addresses must be known before any broker starts, for its peers' dial flags.
 */
export async function startFaultLinks(etcdClientPort: number, ports: readonly number[]): Promise<FaultLinks> {
  const brokers = ports.length;
  const proxies: FaultProxy[] = [];
  const start = async (target: string) => {
    const proxy = await startFaultProxy({ target });
    proxies.push(proxy);
    return proxy;
  };
  try {
    const etcdLinks: FaultProxy[] = [];
    const peerLinks: (FaultProxy | undefined)[][] = [];
    for (let from = 0; from < brokers; from++) {
      etcdLinks.push(await start(`127.0.0.1:${etcdClientPort}`));
      peerLinks.push([]);
      for (let to = 0; to < brokers; to++) {
        peerLinks[from]!.push(from === to ? undefined : await start(`127.0.0.1:${ports[to]}`));
      }
    }
    const check = (index: number, what: string) => {
      if (!Number.isInteger(index) || index < 0 || index >= brokers)
        throw new RangeError(`${what}: ${index}, expected a broker index 0..${brokers - 1}`);
    };
    return {
      ports,
      flagsOf(index) {
        check(index, 'broker');
        const dial = peerLinks[index]!.flatMap((link, to) =>
          link === undefined ? [] : [`127.0.0.1:${ports[to]}=${link.address}`],
        );
        return [
          `--cluster.etcd=http://${etcdLinks[index]!.address}`,
          `--cluster.peer.dial=${dial.join(',')}`,
        ];
      },
      etcdLink(index) {
        check(index, 'etcdLink');
        return etcdLinks[index]!;
      },
      peerLink(from, to) {
        check(from, 'peerLink from');
        check(to, 'peerLink to');
        if (from === to) throw new RangeError(`peerLink: ${from} -> ${to}, a broker has no link to itself`);
        return peerLinks[from]![to]!;
      },
      close: async () => {
        await Promise.all(proxies.map((p) => p.close()));
      },
    };
  } catch (error) {
    await Promise.all(proxies.map((p) => p.close()));
    throw error;
  }
}
