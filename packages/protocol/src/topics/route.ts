/**
 * Route => primary:string replicaCount:int32 [replica:string]*replicaCount
 *
 * Who serves a partition: the primary's endpoint (`host:port`; empty when it has none) and the
 * endpoints of its other replicas. On one node: this broker, no replicas.
 */
import { DecodeError, readCount, type WireReader } from '../codec/reader.js';
import { stringBytes, type WireWriter } from '../codec/writer.js';

export interface Route {
  primary: string;
  replicas: readonly string[];
}

export function routeBytes(route: Route): number {
  let n = stringBytes(route.primary) + 4;
  for (const r of route.replicas) n += stringBytes(r);
  return n;
}

export function writeRoute(w: WireWriter, route: Route): void {
  w.string(route.primary).int32(route.replicas.length);
  for (const r of route.replicas) w.string(r);
}

export function readRoute(reader: WireReader, field: string): Route {
  try {
    const primary = reader.string('primary');
    const count = readCount(reader, 'replicaCount', 2);
    const replicas: string[] = [];
    for (let i = 0; i < count; i++) replicas.push(reader.string('replicas'));
    return { primary, replicas };
  } catch (error) {
    // The path only on failure: an answer holds thousands of routes.
    if (error instanceof DecodeError) throw new DecodeError(`${field}.${error.message}`);
    throw error;
  }
}
