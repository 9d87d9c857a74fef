/**
 * The API table: one row per apiKey, one entry per version with its request decoder and its
 * capabilities. The decoder, the broker's dispatch and metrics, the API_VERSIONS answer, the
 * protocol document's table and the clients' capability checks all read it (table.ts).
 */
import { ApiKey, type ApiKeyValue } from '../api.js';
import { decodeApplyRequest } from '../requests/apply/v1.js';
import { decodeApplyRequestV2 } from '../requests/apply/v2.js';
import { decodeAuthenticateRequest } from '../requests/authenticate/v1.js';
import { decodeFetchRequestV1 } from '../requests/fetch/v1.js';
import { decodeFetchRequestV2 } from '../requests/fetch/v2.js';
import { decodeFetchRequestV5 } from '../requests/fetch/v5.js';
import { decodeListRequest } from '../requests/list/v1.js';
import { decodeListFragmentsRequest } from '../requests/list-fragments/v1.js';
import { decodeMetadataRequest } from '../requests/metadata/v1.js';
import { decodeMetadataRequestV3 } from '../requests/metadata/v3.js';
import { decodeMoveRequest } from '../requests/move/v1.js';
import { decodeProduceRequest } from '../requests/produce/v1.js';
import { decodeProduceRequestV2 } from '../requests/produce/v2.js';
import { decodeReplicateRequest } from '../requests/replicate/v1.js';
import { decodeUsersRequest } from '../requests/users/v1.js';
import { type Capability, Operation, type OperationValue } from './capabilities.js';

/** Decodes a request's payload (from `payloadStart`, after the header); throws DecodeError. */
export type RequestDecoder<Body> = (frame: Buffer, payloadStart: number) => Body;

export interface VersionDef<Body> {
  readonly decode: RequestDecoder<Body>;
  readonly has: readonly Capability[];
}

export interface RowDef {
  readonly operation: OperationValue;
  /** The `api` label of booblik_requests_total. */
  readonly metricLabel: string;
  /**
   * Served to a connection that has not authenticated when `booblik.auth=required`: only what a
   * client needs to authenticate (API_VERSIONS, AUTHENTICATE). With auth off every API is served.
   */
  readonly beforeAuthentication: boolean;
  /** By version number, from 1, with no gap (API_VERSIONS answers a range). */
  readonly versions: Readonly<Record<number, VersionDef<unknown>>>;
}

function version<Body>(decode: RequestDecoder<Body>, ...has: Capability[]): VersionDef<Body> {
  return { decode, has };
}

/** API_VERSIONS has no fields: its header is the whole request. */
const noFields: RequestDecoder<null> = () => null;

export const apiRowDefs = {
  [ApiKey.PRODUCE]: {
    operation: Operation.PRODUCE,
    metricLabel: 'produce',
    beforeAuthentication: false,
    versions: {
      1: version(decodeProduceRequest, 'proxied'),
      2: version(decodeProduceRequestV2, 'proxied', 'expectedOffset'),
      // v3 is v2's bytes from a client that follows routes (NOT_PRIMARY rather than a proxied answer).
      3: version(decodeProduceRequestV2, 'followsRoutes', 'expectedOffset'),
    },
  },
  [ApiKey.FETCH]: {
    operation: Operation.FETCH,
    metricLabel: 'fetch',
    beforeAuthentication: false,
    versions: {
      1: version(decodeFetchRequestV1, 'proxied'),
      2: version(decodeFetchRequestV2, 'proxied', 'held'),
      // v3 and v4 are v2's bytes: v3 follows routes, v4 also takes reads from in-sync replicas.
      3: version(decodeFetchRequestV2, 'followsRoutes', 'held'),
      4: version(decodeFetchRequestV2, 'followsRoutes', 'held', 'replicaReadable'),
      // v5 is v4 with the epoch of the last record the consumer read.
      5: version(decodeFetchRequestV5, 'followsRoutes', 'held', 'replicaReadable', 'carriesEpochs'),
    },
  },
  [ApiKey.METADATA]: {
    operation: Operation.DESCRIBE,
    metricLabel: 'metadata',
    beforeAuthentication: false,
    versions: {
      1: version(decodeMetadataRequest),
      // v2 asks the same question as v1; only the answer differs.
      2: version(decodeMetadataRequest, 'routes'),
      3: version(decodeMetadataRequestV3, 'routes', 'atRevision', 'held'),
      // v4 and v5 ask v3's question; their answers carry RouteV2 (v5 also where offsets come from).
      4: version(decodeMetadataRequestV3, 'routes', 'atRevision', 'held', 'replicaRoutes'),
      5: version(decodeMetadataRequestV3, 'routes', 'atRevision', 'held', 'replicaRoutes', 'offsetSources'),
    },
  },
  [ApiKey.APPLY]: {
    operation: Operation.ALTER,
    metricLabel: 'apply',
    beforeAuthentication: false,
    versions: {
      1: version(decodeApplyRequest),
      // v2 is v1 with op 3: a delete that also purges the topic's store.
      2: version(decodeApplyRequestV2, 'purgesStore'),
    },
  },
  [ApiKey.LIST]: {
    operation: Operation.DESCRIBE,
    metricLabel: 'list',
    beforeAuthentication: false,
    versions: {
      1: version(decodeListRequest, 'routes', 'held'),
      // v2 asks v1's question; its answer carries RouteV2.
      2: version(decodeListRequest, 'routes', 'held', 'replicaRoutes'),
    },
  },
  [ApiKey.API_VERSIONS]: {
    operation: Operation.DESCRIBE,
    metricLabel: 'apiVersions',
    // What a client asks first: it stays open to a connection that has not authenticated.
    beforeAuthentication: true,
    versions: { 1: version(noFields) },
  },
  [ApiKey.LIST_FRAGMENTS]: {
    operation: Operation.DESCRIBE,
    metricLabel: 'listFragments',
    beforeAuthentication: false,
    versions: { 1: version(decodeListFragmentsRequest) },
  },
  [ApiKey.MOVE]: {
    operation: Operation.CLUSTER,
    metricLabel: 'move',
    beforeAuthentication: false,
    versions: { 1: version(decodeMoveRequest) },
  },
  [ApiKey.REPLICATE]: {
    operation: Operation.REPLICATE,
    metricLabel: 'replicate',
    beforeAuthentication: false,
    versions: { 1: version(decodeReplicateRequest, 'carriesEpochs') },
  },
  [ApiKey.AUTHENTICATE]: {
    operation: Operation.AUTHENTICATE,
    metricLabel: 'authenticate',
    beforeAuthentication: true,
    versions: { 1: version(decodeAuthenticateRequest) },
  },
  [ApiKey.USERS]: {
    // Users decide who may connect at all: a cluster-wide change.
    operation: Operation.CLUSTER,
    metricLabel: 'users',
    beforeAuthentication: false,
    versions: { 1: version(decodeUsersRequest) },
  },
} as const satisfies Record<ApiKeyValue, RowDef>;

/** The bodies a row's versions decode to, as one union. */
type BodiesOf<Versions> = {
  [N in keyof Versions]: Versions[N] extends VersionDef<infer Body> ? Body : never;
}[keyof Versions];

/** The decoded payload of a request of `K`, of whichever version. */
export type RequestBody<K extends ApiKeyValue> = BodiesOf<(typeof apiRowDefs)[K]['versions']>;
