/** A connection to the first of the bootstrap brokers that answers (`--broker a:9092,b:9092`). */
import { Connection, type ConnectOptions, isConnectionLoss } from '@booblik/client';
import { NoBrokerReachableError } from './errors.js';

/**
 * Dials each address in turn and returns the first connection. One address fails with its own
 * error; several fail with one error naming them all and why the last one failed.
 */
export async function connectFirst(
  addresses: readonly string[],
  options: ConnectOptions,
): Promise<Connection> {
  let last: unknown;
  for (const address of addresses) {
    try {
      return await Connection.connect(address, options);
    } catch (error) {
      if (!isConnectionLoss(error) || options.signal?.aborted) throw error;
      last = error;
    }
  }
  if (addresses.length === 1) throw last;
  throw new NoBrokerReachableError(addresses, last as Error);
}
