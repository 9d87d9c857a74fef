/**
 * Before a broker joins a cluster whose links are TLS: a broker the others cannot verify, or that
 * cannot verify them, would be given partitions it can neither replicate nor hand on, so it is
 * refused at start with the reason, before it takes any. Two checks: its own certificate must chain
 * to a CA of booblik.tls.ca.file (the file every broker verifies its peers against), and when
 * members are live, at least one of those that answer must present a certificate it verifies.
 */
import { X509Certificate } from 'node:crypto';
import type tls from 'node:tls';
import { decodeMember, Keyspace } from '@booblik/cluster';
import type { Etcd3 } from 'etcd3';
import { ConfigError } from '../errors.js';
import { pemCertificateBlocks } from '../tls/credentials.js';
import { connectPeerTls, splitAddress } from './peer-connection.js';

/** Intermediates followed from the certificate to a CA, at most. */
const CHAIN_DEPTH_MAX = 8;
/** A member's TLS handshake is answered at once; one that is not is left out of the judgement. */
export const PROBE_TIMEOUT_MS = 5000;

/** The certificates of PEM text (a file's contents, or several). */
function certificatesIn(pem: tls.SecureContextOptions['cert']): X509Certificate[] {
  const texts = (Array.isArray(pem) ? pem : pem === undefined ? [] : [pem]).map(String);
  return texts.flatMap(pemCertificateBlocks).map((block) => new X509Certificate(block));
}

/**
 * Why the other brokers could not verify this broker's certificate against the cluster's CA file,
 * or null. Its file's first certificate is followed through the intermediates in the same file to a
 * CA of `ca`.
 */
export function ownCertificateProblem(options: tls.SecureContextOptions): string | null {
  const chain = certificatesIn(options.cert);
  const cas = certificatesIn(options.ca as tls.SecureContextOptions['cert']);
  if (chain.length === 0) return 'its certificate file holds no certificate';
  if (cas.length === 0) return 'booblik.tls.ca.file holds no certificate';
  const issued = (child: X509Certificate, parent: X509Certificate) =>
    child.checkIssued(parent) && child.verify(parent.publicKey);
  let current = chain[0]!;
  for (let depth = 0; depth <= CHAIN_DEPTH_MAX; depth++) {
    if (cas.some((ca) => issued(current, ca))) return null;
    const next = chain.find((c) => c !== current && issued(current, c));
    if (next === undefined) break;
    current = next;
  }
  return (
    `its certificate (${chain[0]!.subject.replaceAll('\n', ', ')}, issued by ${chain[0]!.issuer.replaceAll('\n', ', ')}) ` +
    'is not signed by a CA of booblik.tls.ca.file, which the other brokers verify it against'
  );
}

export type ProbeOutcome =
  | { kind: 'verified' }
  /** The handshake failed on a certificate: the member's, by this broker's CA file, or this broker's, by the member. */
  | { kind: 'unverified'; reason: string }
  /** Nothing to judge by: the member is down, slow, or not speaking TLS. */
  | { kind: 'unreachable'; reason: string };

/** What a failed handshake says about certificates; anything else leaves the member unjudged. */
const CERTIFICATE_ERROR =
  /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)|ALTNAME|ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE|DECRYPT_ERROR|HANDSHAKE_FAILURE)/;

/** One TLS handshake with a member, as a peer connection makes it (the same options and name), then closed. */
export function probeMember(
  dialAddress: string,
  options: tls.ConnectionOptions,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const { host, port } = splitAddress(dialAddress);
    const socket = connectPeerTls(host, port, options);
    const done = (outcome: ProbeOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => done({ kind: 'unreachable', reason: `no TLS handshake within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.once('secureConnect', () => done({ kind: 'verified' }));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const certificate = CERTIFICATE_ERROR.test(`${error.code ?? ''} ${error.message}`);
      done({ kind: certificate ? 'unverified' : 'unreachable', reason: error.message });
    });
  });
}

/**
 * Why this broker may not join, or null: members answered and not one handshake verified. A member
 * that is down or slow says nothing; one refused among verified ones is that member's problem, not
 * this broker's (it stays out of the pool by itself).
 */
export function joinProblem(outcomes: readonly { id: string; outcome: ProbeOutcome }[]): string | null {
  if (outcomes.some((o) => o.outcome.kind === 'verified')) return null;
  const refused = outcomes.filter((o) => o.outcome.kind === 'unverified');
  if (refused.length === 0) return null;
  const reasons = refused.map((o) => `${o.id}: ${(o.outcome as { reason: string }).reason}`).join('; ');
  return (
    `no member's TLS handshake verified (${reasons}): is booblik.tls.ca.file the cluster's CA, ` +
    "and this broker's certificate signed by it?"
  );
}

/**
 * Refuses the join (a ConfigError: the start fails with exit code 2) when this broker's certificate
 * would not verify at its peers, or when the live members it reached all failed to verify.
 */
export async function checkJoin(
  etcd: Etcd3,
  o: {
    cluster: string;
    selfId: string;
    peerTls: tls.ConnectionOptions;
    peerDial?: ReadonlyMap<string, string> | undefined;
    timeoutMs?: number;
  },
): Promise<void> {
  const own = ownCertificateProblem(o.peerTls as tls.SecureContextOptions);
  if (own !== null) throw new ConfigError(`cluster ${o.cluster}: this broker may not join: ${own}`);
  const stored = await etcd.getAll().prefix(new Keyspace(o.cluster).membersPrefix).buffers();
  const members = Object.values(stored)
    .map((bytes) => decodeMember(bytes))
    .flatMap((d) => ('value' in d && d.value.id !== o.selfId ? [d.value] : []));
  const outcomes = await Promise.all(
    members.map(async (m) => ({
      id: m.id,
      outcome: await probeMember(o.peerDial?.get(m.address) ?? m.address, o.peerTls, o.timeoutMs),
    })),
  );
  const problem = joinProblem(outcomes);
  if (problem !== null) throw new ConfigError(`cluster ${o.cluster}: this broker may not join: ${problem}`);
}
