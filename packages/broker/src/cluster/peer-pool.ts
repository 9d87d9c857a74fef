import { PeerConnection, type PeerSecurity, plaintextPeers } from './peer-connection.js';

/** Connections freed by long polls kept open per peer for the next ones; more are closed. */
const IDLE_WAITING_CONNECTIONS_MAX = 16;

/**
 * Connections to the other brokers, by address. Requests answered at once share one pipelined
 * connection per peer. A held FETCH (a long poll) takes a connection of its own for its wait, since
 * a peer answers each connection in request order and a held answer would delay every answer
 * behind it; connections freed by long polls are kept for the next ones.
 *
 * Peers are named by the address they advertise; `dialAddresses` (booblik.cluster.peer.dial) gives
 * another address to connect to for some, applied here so every connection to a peer goes through it.
 */
export class PeerPool {
  private readonly shared = new Map<string, PeerConnection>();
  private readonly idleWaiting = new Map<string, PeerConnection[]>();
  private readonly all = new Set<PeerConnection>();

  constructor(
    private readonly dialAddresses: ReadonlyMap<string, string> = new Map(),
    /** TLS and this broker's token, when the cluster is secured: every connection uses them. */
    private readonly security: PeerSecurity = plaintextPeers,
  ) {}

  /** The connection for requests the peer answers at once. */
  quick(address: string): PeerConnection {
    let connection = this.shared.get(address);
    if (connection === undefined || connection.isDead) {
      connection = this.dial(address);
      this.shared.set(address, connection);
    }
    return connection;
  }

  /** A connection for one held request; hand it back with `release` when answered. */
  borrow(address: string): PeerConnection {
    const idle = this.idleWaiting.get(address);
    while (idle !== undefined && idle.length > 0) {
      const connection = idle.pop()!;
      if (!connection.isDead) return connection;
    }
    return this.dial(address);
  }

  release(connection: PeerConnection): void {
    if (connection.isDead) return;
    const idle = this.idleWaiting.get(connection.address) ?? [];
    if (idle.length >= IDLE_WAITING_CONNECTIONS_MAX) {
      connection.close();
      return;
    }
    idle.push(connection);
    this.idleWaiting.set(connection.address, idle);
  }

  /** Open connections, for the metrics. */
  get size(): number {
    return this.all.size;
  }

  /**
   * Closes every connection to a peer whose lease is gone: what waits on it (a broker stopped, not
   * dead, never answers) is failed now rather than at its deadline, and routes move on.
   */
  closeTo(address: string): void {
    for (const connection of [...this.all]) if (connection.address === address) connection.close();
  }

  closeAll(): void {
    for (const connection of [...this.all]) connection.close();
  }

  private dial(address: string): PeerConnection {
    const connection = new PeerConnection(
      address,
      (dead) => {
        this.all.delete(dead);
        if (this.shared.get(address) === dead) this.shared.delete(address);
      },
      this.dialAddresses.get(address),
      undefined,
      this.security,
    );
    this.all.add(connection);
    return connection;
  }
}
