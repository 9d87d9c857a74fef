import type { Connection } from '@booblik/client';
import { brokerAddresses, integer, parse } from '../args.js';
import { connectFirst } from '../connect.js';
import { DEFAULT_HEALTH_TIMEOUT_MS, ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { tlsOption } from '../tls.js';

/** booblik health [--timeout MS]: METADATA within a deadline; one line either way. */
export async function healthCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, { timeout: { type: 'string' } });
  const timeout = parsed.string('timeout');
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('health'));
    return ExitCode.OK;
  }
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  const brokers = brokerAddresses(parsed.string('broker'), io.env);
  const tls = tlsOption(parsed, io.env);
  const timeoutMs = timeout === undefined ? DEFAULT_HEALTH_TIMEOUT_MS : integer('--timeout', timeout, 1);
  const auth = authOption(parsed, io.env);
  // A timer of its own, not AbortSignal.timeout: on Node 20 a timeout signal held only by
  // AbortSignal.any can be collected before it fires, and the deadline never comes.
  const expiry = new AbortController();
  const expiryTimer = setTimeout(() => expiry.abort(), timeoutMs);
  const deadline = AbortSignal.any([expiry.signal, io.signal]);
  const startedAt = performance.now();
  let connection: Connection | undefined;
  try {
    connection = await connectFirst(brokers, { timeoutMs, signal: deadline, ...auth, ...tls });
    const topics = await untilAborted(connection.metadata(), deadline, timeoutMs);
    const ms = Math.round(performance.now() - startedAt);
    const partitions = topics.reduce((n, t) => n + t.partitions.length, 0);
    await out.write(
      `healthy: ${connection.address} answered METADATA in ${ms} ms (${topics.length} topics, ${partitions} partitions)\n`,
    );
    return ExitCode.OK;
  } catch (error) {
    await out.write(`unhealthy: ${brokers.join(',')}: ${reason(error, timeoutMs, deadline)}\n`);
    return ExitCode.FAILURE;
  } finally {
    clearTimeout(expiryTimer);
    connection?.destroy();
  }
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error(`no answer within ${timeoutMs} ms`));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function reason(error: unknown, timeoutMs: number, deadline: AbortSignal): string {
  if (deadline.aborted) return `no answer within ${timeoutMs} ms`;
  return error instanceof Error ? error.message : String(error);
}
