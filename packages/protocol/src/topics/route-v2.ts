/**
 * RouteV2 => epoch:int32 primary:string replicaCount:int32 [replica:ReplicaState]*replicaCount
 * ReplicaState => member:string address:string zone:string flags:int8 lagRecords:int64 lagMillis:int64
 *
 * A partition's route with what a client needs to pick a replica to read from and an operator to see
 * its health: the primary's epoch and endpoint (empty when it has none), then every replica of the
 * partition (the primary among them) in placement order, each with its member id, endpoint (empty when
 * it is not live), zone, whether it is in sync and live, and how far behind the primary it is.
 * Lag is -1 where the answer does not know it (LIST, or a primary that did not say).
 */
import { DecodeError, fieldError, readCount, type WireReader } from '../codec/reader.js';
import { stringBytes, type WireWriter } from '../codec/writer.js';

export const ReplicaFlag = {
  /** In the partition's in-sync set: holds everything committed. */
  IN_SYNC: 1,
  /** Holds its membership lease now; its address is dialable. */
  LIVE: 2,
} as const;

/** lagRecords / lagMillis when the answer does not know. */
export const LAG_UNKNOWN = -1;

export interface ReplicaState {
  member: string;
  address: string;
  zone: string;
  flags: number;
  /** Records the primary holds that this replica has not acknowledged; 0 for the primary. */
  lagRecords: number;
  /** Milliseconds since it last had everything the primary had; 0 when level. */
  lagMillis: number;
}

export interface RouteV2 {
  epoch: number;
  primary: string;
  replicas: readonly ReplicaState[];
}

export function routeV2Bytes(route: RouteV2): number {
  let n = 4 + stringBytes(route.primary) + 4;
  for (const r of route.replicas)
    n += stringBytes(r.member) + stringBytes(r.address) + stringBytes(r.zone) + 17;
  return n;
}

export function writeRouteV2(w: WireWriter, route: RouteV2): void {
  w.int32(route.epoch).string(route.primary).int32(route.replicas.length);
  for (const r of route.replicas) {
    w.string(r.member).string(r.address).string(r.zone).int8(r.flags).int64(r.lagRecords).int64(r.lagMillis);
  }
}

export function readRouteV2(reader: WireReader, field: string): RouteV2 {
  try {
    const epoch = reader.int32('epoch');
    if (epoch < 0) throw fieldError('epoch', epoch, '>= 0');
    const primary = reader.string('primary');
    const count = readCount(reader, 'replicaCount', 23);
    const replicas: ReplicaState[] = [];
    for (let i = 0; i < count; i++) {
      const member = reader.string(`replicas[${i}].member`);
      const address = reader.string(`replicas[${i}].address`);
      const zone = reader.string(`replicas[${i}].zone`);
      const flags = reader.int8(`replicas[${i}].flags`);
      const lagRecords = readLag(reader, `replicas[${i}].lagRecords`);
      const lagMillis = readLag(reader, `replicas[${i}].lagMillis`);
      replicas.push({ member, address, zone, flags, lagRecords, lagMillis });
    }
    return { epoch, primary, replicas };
  } catch (error) {
    if (error instanceof DecodeError) throw new DecodeError(`${field}.${error.message}`);
    throw error;
  }
}

function readLag(reader: WireReader, field: string): number {
  const lag = reader.int64(field);
  if (lag < LAG_UNKNOWN) throw fieldError(field, lag, '>= -1');
  return lag;
}

/** The v1 Route of a RouteV2: the primary and the other live in-sync replicas (what NOT_PRIMARY carries). */
export function inSyncRouteOf(route: RouteV2): { primary: string; replicas: string[] } {
  const replicas: string[] = [];
  const both = ReplicaFlag.IN_SYNC | ReplicaFlag.LIVE;
  for (const r of route.replicas) {
    if ((r.flags & both) === both && r.address !== route.primary) replicas.push(r.address);
  }
  return { primary: route.primary, replicas };
}
