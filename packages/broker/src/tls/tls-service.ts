/**
 * TLS for the broker's two ports: the configuration checked at start, the certificates watched, and
 * each new connection sent through the first-byte gate. Absent when booblik.tls is off: then the
 * ports run exactly as they did before TLS existed.
 */

import type net from 'node:net';
import type { Logger } from '@booblik/log';
import { type Clock, systemClock } from '@booblik/protocol';
import type { BrokerConfig, TlsClientAuth } from '../config/keys.js';
import { ConfigError } from '../errors.js';
import { CertificateWatch } from './certificate-watch.js';
import { ConnectionGate, type GateTargets } from './connection-gate.js';
import { TlsFileError } from './credentials.js';
import { refusePlaintext } from './plaintext-refusal.js';

export interface TlsServiceOptions {
  logger: Logger;
  /** Rate-limited: a flood of failed handshakes is one line a while. */
  warn: (line: string) => void;
  clock?: Clock;
  wallNowMs?: () => number;
  pollMs?: number;
}

/** The TLS keys that do not go together, or null: checked whether TLS is on or not. */
export function tlsConfigProblem(c: BrokerConfig): string | null {
  if (c.tls === 'off') {
    return c.tlsClientAuth === 'none'
      ? null
      : `booblik.tls.client.auth=${c.tlsClientAuth} needs booblik.tls=allowed or required (it is off)`;
  }
  if (c.clusterEtcd.length > 0 && c.tlsCaFile === '') {
    // Brokers dial each other with TLS too, and check each other's certificate against the cluster's CA.
    return `booblik.tls=${c.tls} in a cluster needs booblik.tls.ca.file: brokers verify each other's certificates against it`;
  }
  if (c.tlsCertFile === '' || c.tlsKeyFile === '') {
    return `booblik.tls=${c.tls} needs booblik.tls.cert.file and booblik.tls.key.file (PEM files)`;
  }
  if (c.tlsClientAuth !== 'none' && c.tlsCaFile === '') {
    return `booblik.tls.client.auth=${c.tlsClientAuth} needs booblik.tls.ca.file (the CAs client certificates are verified against)`;
  }
  return null;
}

export class TlsService {
  readonly watch: CertificateWatch;

  private constructor(
    private readonly config: BrokerConfig,
    private readonly options: TlsServiceOptions,
  ) {
    try {
      this.watch = new CertificateWatch(
        { cert: config.tlsCertFile, key: config.tlsKeyFile, ca: config.tlsCaFile },
        {
          logger: options.logger,
          clock: options.clock ?? systemClock,
          ...(options.wallNowMs ? { wallNowMs: options.wallNowMs } : {}),
          ...(options.pollMs ? { pollMs: options.pollMs } : {}),
        },
      );
    } catch (error) {
      if (error instanceof TlsFileError) throw new ConfigError(error.message, { cause: error });
      throw error;
    }
  }

  /** Null when booblik.tls is off; throws ConfigError for keys that do not go together or bad files. */
  static start(config: BrokerConfig, options: TlsServiceOptions): TlsService | null {
    const problem = tlsConfigProblem(config);
    if (problem !== null) throw new ConfigError(problem);
    return config.tls === 'off' ? null : new TlsService(config, options);
  }

  /** A protocol-port connection: served as plaintext or TLS, or answered TLS_REQUIRED. */
  protocolGate(serve: (socket: net.Socket) => void, refused: () => void): ConnectionGate {
    return this.gate(this.config.tlsClientAuth, {
      serve,
      refuse: (s) => refusePlaintext(s, refused),
    });
  }

  /** The HTTP port's gate: the same certificate, no client certificates asked for (scrapers have none). */
  httpGate(serve: (socket: net.Socket) => void): ConnectionGate {
    return this.gate('none', {
      serve,
      refuse: (s) =>
        s
          .resume()
          .end(
            'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n' +
              'this port requires HTTPS (booblik.tls=required)\n',
          ),
    });
  }

  private gate(clientAuth: TlsClientAuth, targets: GateTargets): ConnectionGate {
    const gate = new ConnectionGate(
      {
        plaintext: this.config.tls === 'allowed' ? 'serve' : 'refuse',
        clientAuth,
        context: this.watch.contextOptions,
        warn: this.options.warn,
      },
      targets,
    );
    this.watch.onReload(() => gate.setContext(this.watch.contextOptions));
    return gate;
  }

  /** /readyz lines: the broker's certificate has expired (and then it is not ready). */
  readiness(): { ready: boolean; detail: string[] } {
    if (!this.watch.certExpired) return { ready: true, detail: [] };
    const at = new Date(this.watch.certExpiresAtMs).toISOString();
    return {
      ready: false,
      detail: [`tls: the broker's certificate in ${this.config.tlsCertFile} expired at ${at}`],
    };
  }

  close(): void {
    this.watch.close();
  }
}
