import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { defaultLogConfig, type LogConfig, type Logger, partitionDirName } from '@booblik/log';
import { crc32cImplementation, systemClock } from '@booblik/protocol';
import type { Registry } from 'prom-client';
import type { ApiContext } from './api/context.js';
import type { ClusterNode } from './cluster/cluster-node.js';
import { etcdSecurityOf } from './cluster/etcd-security.js';
import { checkSingleNode, establishIdentity } from './cluster/identity.js';
import type { BrokerConfig } from './config/keys.js';
import { DataDirLock } from './data-dir-lock.js';
import { dirNameProblem } from './dir-names.js';
import { ConfigError } from './errors.js';
import { type HttpEndpoints, startHttp } from './http.js';
import { shutdownGraceMs } from './limits.js';
import { listen } from './listen.js';
import { createLogger } from './logger.js';
import { BrokerMetrics } from './metrics.js';
import { MetricsSummary } from './metrics-summary.js';
import { PartitionRegistry, type PartitionReport } from './partitions.js';
import { PersisterService } from './persister/persister-service.js';
import { RateLimitedLog } from './rate-limited-log.js';
import { minInSyncOf } from './replication/min-in-sync.js';
import { RequestRouter } from './routing/request-router.js';
import { createSecurity, openTokenVerifier } from './security/open-security.js';
import { PeerIdentity } from './security/peer-identity.js';
import type { TokenVerifier } from './security/token-verifier.js';
import type { UserStore } from './security/user-store.js';
import { Session } from './session.js';
import { type BrokerTime, systemTime } from './time.js';
import type { ConnectionGate } from './tls/connection-gate.js';
import { TlsService } from './tls/tls-service.js';
import { FileSpecStore } from './topics/file-spec-store.js';
import { TopicService } from './topics/topic-service.js';
import type { TopicTable } from './topics/topic-table.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function logConfigOf(config: BrokerConfig): LogConfig {
  return {
    ...defaultLogConfig,
    segmentBytesMax: config.segmentBytesMax,
    indexIntervalBytes: config.indexIntervalBytes,
    flushEveryRecords: config.flushEveryRecords,
    flushEveryMs: config.flushEveryMs,
    retentionBytes: config.retentionBytes,
    retentionMs: config.retentionMs,
    tailCacheBytes: config.tailCacheBytes,
    writerQueueBytesMax: config.writerQueueBytes,
    localRetentionBytes: config.localRetentionBytes,
    localRetentionMs: config.localRetentionMs,
  };
}

/**
 * The running broker: partitions recovered and registered, the protocol listener, the HTTP
 * endpoints, and the timers for retention and the metrics summary.
 */
/** How long a stopping broker waits for the handovers of the partitions it is primary of. */
const HAND_OFF_WAIT_MS = 5000;

export class Broker {
  readonly metrics = new BrokerMetrics();
  private readonly sessions = new Set<Session>();
  private readonly registry: PartitionRegistry;
  private readonly topicService: TopicService;
  /** Uploads, restores and store retention of the topics whose spec names a store. */
  readonly persister: PersisterService;
  private readonly ctx: ApiContext;
  private server: net.Server | undefined;
  private http: HttpEndpoints | undefined;
  private timers: NodeJS.Timeout[] = [];
  private summary: MetricsSummary | undefined;
  private ready = false;
  private lock: DataDirLock | undefined;
  private readonly waitingForRecovery: net.Socket[] = [];
  private closing: Promise<void> | undefined;
  private clusterNode: ClusterNode | undefined;
  /** In a cluster, the SCRAM users in etcd (set when the cluster is joined, before anyone is served). */
  private clusterUsers: UserStore | undefined;
  private peerIdentity: PeerIdentity | null = null;
  private prometheus: Promise<Registry> | undefined;
  /** Null when booblik.tls is off: the ports work as they did before TLS. */
  private tls: TlsService | null = null;
  private tlsGate: ConnectionGate | null = null;

  private constructor(
    readonly config: BrokerConfig,
    private readonly logger: Logger,
    private readonly tokens: TokenVerifier | null,
    time: BrokerTime,
  ) {
    this.persister = new PersisterService(
      // The topic table in use: the spec file's on one node, etcd's copy in a cluster.
      (name) => this.ctx.topics.get(name),
      config.storeCacheBytes,
      logger,
      config.clusterEtcd.length > 0,
      // The cluster is joined after the partitions are recovered (and uploading): until then, and
      // on one node, every partition uploads. Read at each upload, so a function, not a value.
      (topic, id) => this.clusterNode?.uploadsHere(topic, id) ?? true,
    );
    this.registry = new PartitionRegistry(config.dataDir, logConfigOf(config), logger, this.persister);
    this.topicService = new TopicService(
      new FileSpecStore(path.resolve(config.dataDir)),
      this.registry,
      logConfigOf(config),
      logger,
    );
    this.ctx = {
      registry: this.registry,
      routing: this.registry,
      router: new RequestRouter({
        resolver: this.registry,
        replicas: null,
        proxying: false,
        selfId: '',
        isReadOnly: (topic) => this.registry.isReadOnly(topic),
      }),
      proxy: null,
      cluster: null,
      replication: null,
      topics: this.topicService,
      metrics: this.metrics,
      logger,
      noisyLog: new RateLimitedLog(logger),
      security: createSecurity(config, logger, this.metrics, tokens, time, () => this.clusterUsers),
      clock: time.clock,
    };
  }

  /** Recovers every partition, then listens. Resolves once `booblik listening on` has been logged. */
  static async start(
    config: BrokerConfig,
    options: { logger?: Logger; origins?: Record<string, string>; time?: BrokerTime } = {},
  ) {
    const logger = options.logger ?? createLogger();
    const time = options.time ?? systemTime;
    const broker = new Broker(config, logger, await openTokenVerifier(config, logger, time), time);
    await broker.run(options.origins ?? {});
    return broker;
  }

  get address(): AddressInfo {
    return this.server!.address() as AddressInfo;
  }

  get httpAddress(): AddressInfo | undefined {
    return this.http?.address;
  }

  get partitions(): PartitionRegistry {
    return this.registry;
  }

  get topics(): TopicTable {
    return this.ctx.topics;
  }

  /** In cluster mode, this broker's membership, copy and routes. */
  get cluster(): ClusterNode | undefined {
    return this.clusterNode;
  }

  /** TLS on the ports (its certificates and their reloads); null when booblik.tls is off. */
  get tlsService(): TlsService | null {
    return this.tls;
  }

  get isReady(): boolean {
    return this.ready;
  }

  private async run(origins: Record<string, string>): Promise<void> {
    const c = this.config;
    this.logger.info(
      `booblik starting (pid ${process.pid}): data dir ${path.resolve(c.dataDir)}, CRC-32C ${crc32cImplementation}`,
    );
    for (const [key, origin] of Object.entries(origins)) {
      if (origin !== 'default') this.logger.info(`config ${key} from ${origin}`);
    }
    this.logger.info(
      `config: port ${c.port}, bind ${c.bindAddress}, topics ${c.topics.map((t) => `${t.name}:${t.partitions}`).join(',')}, ` +
        `segment ${c.segmentBytesMax} B, index every ${c.indexIntervalBytes} B, flush every ${c.flushEveryRecords} records / ${c.flushEveryMs} ms, ` +
        `retention ${c.retentionBytes} B / ${c.retentionMs} ms (checked every ${c.retentionCheckMs} ms), ` +
        `max connections ${c.maxConnections}, max in-flight ${c.maxInflightRequests}, http port ${c.httpPort}`,
    );
    if (!LOOPBACK.has(c.bindAddress) && c.auth === 'off') {
      this.logger.warn(
        `binding ${c.bindAddress} with booblik.auth=off: anyone who can reach this port can read and write`,
      );
    }
    // TLS settings and files are checked first: a configuration error touches nothing.
    this.tls = TlsService.start(c, { logger: this.logger, warn: (line) => this.ctx.noisyLog.warn(line) });
    if (this.tls) {
      this.tlsGate = this.tls.protocolGate(
        (socket) => this.openSession(socket),
        () => this.metrics.refused('TLS_REQUIRED'),
      );
      const expires = new Date(this.tls.watch.certExpiresAtMs).toISOString();
      this.logger.info(
        `tls ${c.tls}: certificate ${c.tlsCertFile} (expires ${expires}), client certificates ${c.tlsClientAuth}`,
      );
    }
    // Order matters: refuse a directory in use and a port in use before anything in the directory is
    // created, read or cut (a second broker on a live directory used to recover it, cutting the live
    // broker's active segment, and only then fail on the port). Then bind both ports, then claim the
    // directory, then recover; connections that arrive meanwhile wait until recovery is done.
    try {
      DataDirLock.check(c.dataDir);
    } catch (error) {
      this.tls?.close(); // its watch would poll on
      throw error;
    }
    try {
      this.server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
      await listen(this.server, c.port, c.bindAddress, 'booblik.port');
      if (c.httpPort >= 0) {
        this.http = await startHttp(
          c.httpPort,
          c.bindAddress,
          () => this.prometheusRegistry(),
          () => this.ready && (this.clusterNode?.ready ?? true) && (this.tls?.readiness().ready ?? true),
          () => [
            ...(this.tls?.readiness().detail ?? []),
            ...this.registry
              .failed()
              .map(
                (f) =>
                  `partition ${partitionDirName(f.topic, f.id)}: cannot be opened, not served: ${f.problem}`,
              ),
            ...this.persister.detail(),
          ],
          this.tls ? (serve) => this.tls!.httpGate(serve) : undefined,
        );
      }
      // After binding, a listener error (EMFILE on accept) is logged, not fatal: the broker serves on.
      this.server.on('error', (error) => this.ctx.noisyLog.warn(`protocol listener: ${error.message}`));
      this.http?.server.on('error', (error) => this.ctx.noisyLog.warn(`http listener: ${error.message}`));
      this.lock = DataDirLock.acquire(c.dataDir);
      this.checkConfiguredNames();
      if (c.clusterEtcd.length > 0) await this.joinCluster();
      else {
        checkSingleNode(c.dataDir);
        // The stored specs, plus those of booblik.topics that are missing (created, never deleted).
        for (const report of await this.topicService.start(c.topics)) this.logRecovery(report);
      }
      await this.ctx.security.bootstrap(process.env.BOOBLIK_BOOTSTRAP_USER);
    } catch (error) {
      await this.abandonStart();
      throw error;
    }
    if (c.auth === 'required') {
      this.logger.info(
        `auth required: ${this.ctx.security.users.size} user(s), token keys ${this.tokens?.keyIds.join(', ') || 'none'}, superusers ${c.authSuperusers.join(', ') || 'none'}`,
      );
    }
    if (c.auth === 'required' && this.ctx.security.users.size === 0 && this.tokens === null) {
      this.logger.warn(
        'booblik.auth=required with no user and no token keys: nobody can connect; add a user with BOOBLIK_BOOTSTRAP_USER=name:password, or set booblik.auth.token.keys.file',
      );
    }

    this.persister.start();
    const retention = setInterval(() => {
      this.registry.enforceRetention();
      this.persister.kickAll(); // expired fragments are deleted from the store
    }, c.retentionCheckMs);
    retention.unref();
    this.timers.push(retention);
    if (c.metricsIntervalMs > 0) {
      this.summary = new MetricsSummary(this.metrics, this.logger);
      const t = setInterval(() => this.summary!.log(), c.metricsIntervalMs);
      t.unref();
      this.timers.push(t);
    }
    this.ready = true;
    for (const socket of this.waitingForRecovery.splice(0)) this.accept(socket);
    const http = this.http ? `, http on ${this.http.address.address}:${this.http.address.port}` : '';
    this.logger.info(`booblik listening on ${this.address.address}:${this.address.port}${http}`);
  }

  /**
   * The Prometheus registry (with its event-loop monitor), made at the first scrape: loading
   * prom-client took about 40 ms, a sixth of an empty broker's start, and nothing needs it before.
   */
  private prometheusRegistry(): Promise<Registry> {
    this.prometheus ??= Promise.all([
      import('./prometheus.js'),
      import('./persister/metrics.js'),
      import('./tls/metrics.js'),
    ]).then(([{ createPrometheusRegistry }, { registerPersisterMetrics }, { registerTlsMetrics }]) => {
      const registry = createPrometheusRegistry(this.metrics, this.registry, () => this.clusterNode);
      registerPersisterMetrics(registry, this.persister);
      if (this.tls) registerTlsMetrics(registry, this.tls);
      return registry;
    });
    return this.prometheus;
  }

  /** Cluster mode: specs, routes and the partitions this broker owns come from etcd. */
  private async joinCluster(): Promise<void> {
    const c = this.config;
    // The address first: a configuration error must leave the data directory untouched.
    const address = c.advertisedAddress || advertisedDefault(c.bindAddress, this.address.port);
    const etcdSecurity = etcdSecurityOf(c);
    const id = establishIdentity(c.dataDir, c.clusterName, c.brokerId);
    // Loaded only here: the etcd client under it (gRPC, protobuf) is most of a single node's start.
    const { ClusterNode } = await import('./cluster/cluster-node.js');
    // With a keys file, this broker proves itself to its peers (they may require it).
    if (this.tokens !== null) this.peerIdentity = await PeerIdentity.create(this.tokens, id, systemClock);
    this.clusterNode = await ClusterNode.start({
      endpoints: c.clusterEtcd,
      etcdSecurity,
      cluster: c.clusterName,
      leaseMs: c.clusterLeaseMs,
      member: { id, zone: c.brokerZone, address },
      dataDir: path.resolve(c.dataDir),
      registry: this.registry,
      logConfigOf: (spec) => this.topicService.logConfigOf(spec),
      logger: this.logger,
      defaultReplication: c.defaultReplication,
      replicaLagMaxMs: c.replicaLagMaxMs,
      minInSyncOf: (topic, replicas) => minInSyncOf(this.clusterNode?.copy.specs.get(topic), replicas),
      peerDial: c.clusterPeerDial,
      peerSecurity: {
        identity: this.peerIdentity,
        tls: () => (this.tls === null ? null : this.tls.watch.contextOptions),
      },
    });
    this.ctx.replication = this.clusterNode.replication;
    this.ctx.routing = this.clusterNode.routing;
    this.ctx.router = new RequestRouter({
      resolver: this.clusterNode.routing,
      replicas: this.clusterNode.replication,
      proxying: true,
      selfId: this.clusterNode.memberId,
      isReadOnly: (topic) => this.registry.isReadOnly(topic),
    });
    this.ctx.topics = this.clusterNode.topics;
    this.ctx.proxy = this.clusterNode.proxy;
    this.ctx.cluster = this.clusterNode;
    const { ClusterUserStore } = await import('./security/cluster-user-store.js');
    this.clusterUsers = new ClusterUserStore(
      this.clusterNode.copy,
      this.clusterNode.userKeys,
      this.logger,
      (name) => {
        const closed = this.ctx.security.closeConnectionsOf(name);
        if (closed > 0)
          this.logger.info(`user ${name} removed from the cluster: ${closed} live connection(s) closed here`);
      },
    );
    await this.clusterNode.openOwned();
    await this.clusterNode.ensureTopics(c.topics);
  }

  /** A topic of booblik.topics whose directories the data directory cannot hold is a configuration error. */
  private checkConfiguredNames(): void {
    const bytesMax = this.registry.dirNameBytesMax;
    for (const t of this.config.topics) {
      const problem = dirNameProblem(t.name, t.partitions, bytesMax);
      if (problem !== null) throw new ConfigError(`booblik.topics: ${problem}`);
    }
  }

  private logRecovery(r: PartitionReport): void {
    const cut =
      r.cuts.length === 0
        ? ''
        : `; recovery cut ${r.cuts.map((x) => `${x.bytes} B at offset ${x.offset} (${x.reason})`).join(', ')}`;
    this.logger.info(
      `partition ${r.topic}-${r.partition}: offsets ${r.logStartOffset}..${r.logEndOffset}, ${r.segments} segment(s), ` +
        `${r.bytes} B, recovered in ${r.recoveryMs.toFixed(1)} ms${cut}`,
    );
  }

  /** Undoes a start that failed part way: ports closed, files closed, the directory released. */
  private async abandonStart(): Promise<void> {
    this.tls?.close();
    this.tlsGate?.close();
    for (const socket of this.waitingForRecovery.splice(0)) socket.destroy();
    if (this.server?.listening) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    if (this.http) await this.http.close();
    await this.persister.close();
    await this.clusterNode?.close().catch(() => {});
    await this.registry.closeAll();
    this.lock?.release();
  }

  private accept(socket: net.Socket): void {
    if (!this.ready && !this.closing) {
      // Bound but still recovering: the connection is served once every partition is open.
      this.waitingForRecovery.push(socket);
      socket.on('error', () => {}); // 'close' follows
      socket.once('close', () => {
        const i = this.waitingForRecovery.indexOf(socket);
        if (i >= 0) this.waitingForRecovery.splice(i, 1);
      });
      return;
    }
    if (this.sessions.size >= this.config.maxConnections || this.closing) {
      this.metrics.connectionsRejected++;
      this.ctx.noisyLog.warn(
        `refused a connection from ${socket.remoteAddress}: ${this.closing ? 'shutting down' : `booblik.max.connections (${this.config.maxConnections}) reached`}`,
      );
      socket.destroy();
      return;
    }
    if (this.tlsGate) this.tlsGate.accept(socket);
    else this.openSession(socket);
  }

  private openSession(socket: net.Socket): void {
    this.metrics.connectionsAccepted++;
    this.metrics.connectionsOpen++;
    const session = new Session(socket, this.ctx, this.config.maxInflightRequests, (s) => {
      this.sessions.delete(s);
      this.metrics.connectionsOpen--;
    });
    this.sessions.add(session);
  }

  /**
   * Graceful shutdown: stop accepting, answer held fetches, let queued writes finish and flush, close
   * files. Sessions still open after the grace period are closed anyway.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.ready = false;
    for (const t of this.timers) clearInterval(t);
    this.tokens?.close();
    this.peerIdentity?.close();
    // Writes move to the other replicas before anything here stops; what waits here is refused, retriably.
    const handed = await this.clusterNode?.handOff(HAND_OFF_WAIT_MS).catch((error: unknown) => {
      this.logger.warn(`handing partitions over before stopping: ${String(error)}`);
      return 0;
    });
    if (handed) this.logger.info(`handed ${handed} partition(s) to in-sync replicas`);
    const listenerClosed = new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    // Connections still at the TLS gate are no session's to drain, yet the listener waits for them.
    this.tlsGate?.close();
    const drained = Promise.all([...this.sessions].map((s) => s.drain()));
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, shutdownGraceMs);
      graceTimer.unref();
    });
    await Promise.race([drained, grace]);
    clearTimeout(graceTimer);
    for (const s of this.sessions) s.destroy();
    await listenerClosed;
    await this.ctx.topics.settled(); // an APPLY still opening partitions finishes first
    await this.persister.close(); // the upload under way ends; the rest waits for the next start
    // Leaving revokes the lease: the others show this broker's partitions without a primary at once.
    await this.clusterNode?.close();
    await this.registry.closeAll();
    if (this.http) await this.http.close();
    this.tls?.close();
    this.lock?.release();
    this.logger.info('booblik stopped');
  }
}

/** The address peers and clients dial when none is configured: the bind address, unless it is a wildcard. */
function advertisedDefault(bindAddress: string, port: number): string {
  if (bindAddress === '0.0.0.0' || bindAddress === '::') {
    throw new ConfigError(
      `booblik.advertised.address: needed when booblik.bind.address is ${bindAddress} in a cluster (the address others dial)`,
    );
  }
  return bindAddress.includes(':') ? `[${bindAddress}]:${port}` : `${bindAddress}:${port}`;
}
