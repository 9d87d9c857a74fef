import { InvalidArgumentError } from './errors.js';
import { DEFAULT_PORT } from './limits.js';

export interface BrokerAddress {
  host: string;
  port: number;
}

const PORT_MAX = 65_535;

/**
 * Reads `host:port`, `[ipv6]:port`, or a bare host (port 9092). The message of a refusal says what
 * was given and what was expected.
 */
export function parseAddress(address: string): BrokerAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  let host: string;
  let portText: string | undefined;
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2];
  } else {
    const colon = address.lastIndexOf(':');
    if (colon >= 0 && address.indexOf(':') !== colon) {
      throw new InvalidArgumentError(`address: "${address}", write an IPv6 host in brackets: [::1]:9092`);
    }
    host = colon >= 0 ? address.slice(0, colon) : address;
    portText = colon >= 0 ? address.slice(colon + 1) : undefined;
  }
  if (host.length === 0) throw new InvalidArgumentError(`address: "${address}", expected host:port`);
  if (portText === undefined) return { host, port: DEFAULT_PORT };
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 1 && port <= PORT_MAX)) {
    throw new InvalidArgumentError(`address: "${address}", port expected 1..${PORT_MAX}`);
  }
  return { host, port };
}

export function formatAddress({ host, port }: BrokerAddress): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
