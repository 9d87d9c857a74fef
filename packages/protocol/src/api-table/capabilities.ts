/**
 * What a version of an API means beyond its bytes: the flags broker handlers and clients decide by,
 * so that nobody compares version numbers. A flag is false wherever it does not apply.
 */
export interface Capabilities {
  /**
   * The client follows routes: a cluster broker that does not serve the partition answers
   * NOT_PRIMARY with the current route. PRODUCE v3, FETCH v3 and later.
   */
  readonly followsRoutes: boolean;
  /**
   * A cluster broker that does not serve the partition forwards the request to the broker that does
   * (the original clients know one address). PRODUCE v1 and v2, FETCH v1 and v2.
   */
  readonly proxied: boolean;
  /** A live in-sync replica may answer from its own copy, up to the commit offset it knows. FETCH v4 and later. */
  readonly replicaReadable: boolean;
  /**
   * The broker may hold the request before answering: a FETCH wait, a METADATA minimum revision, a
   * LIST watch. The wait is the request's own, so a client adds it to its timeout.
   */
  readonly held: boolean;
  /**
   * The request carries epochs and the answer says the epoch of its records: FETCH v5 (the epoch read
   * last), REPLICATE (the primary's epoch).
   */
  readonly carriesEpochs: boolean;
  /** The batch lands only where the partition ends at `expectedOffset`. PRODUCE v2 and later. */
  readonly expectedOffset: boolean;
  /** The answer carries the spec revision and a route per partition. METADATA v2 and later, LIST. */
  readonly routes: boolean;
  /** The request carries a minimum revision and flags (LOCAL). METADATA v3 and later. */
  readonly atRevision: boolean;
  /** Routes are RouteV2: the epoch, every replica with its zone, in-sync flag and lag. METADATA v4 and later, LIST v2. */
  readonly replicaRoutes: boolean;
  /** The answer says where each partition's offsets come from (the primary, a copy, not known). METADATA v5. */
  readonly offsetSources: boolean;
  /** A delete may also remove the topic's history from its fragment store. APPLY v2. */
  readonly purgesStore: boolean;
}

export type Capability = keyof Capabilities;

/** Every flag false; each version sets the ones it has. Also fixes one property order for every version. */
const none: Capabilities = {
  followsRoutes: false,
  proxied: false,
  replicaReadable: false,
  held: false,
  carriesEpochs: false,
  expectedOffset: false,
  routes: false,
  atRevision: false,
  replicaRoutes: false,
  offsetSources: false,
  purgesStore: false,
};

export const capabilityNames: readonly Capability[] = Object.keys(none) as Capability[];

/** A frozen Capabilities with exactly `has` set. */
export function capabilities(has: readonly Capability[]): Capabilities {
  const flags: Record<Capability, boolean> = { ...none };
  for (const name of has) flags[name] = true;
  return Object.freeze(flags);
}

/** The operation a request is authorized as, one per API. */
export const Operation = {
  PRODUCE: 'produce',
  FETCH: 'fetch',
  /** Reading what exists: topics, routes, offsets, fragments, versions. */
  DESCRIBE: 'describe',
  /** Changing topic specs. */
  ALTER: 'alter',
  /** Moving partitions between the cluster's members. */
  CLUSTER: 'cluster',
  /** Broker to broker: a primary's writes to its replicas. */
  REPLICATE: 'replicate',
  /** Saying who is connecting: open to every connection, it is how one gets a principal. */
  AUTHENTICATE: 'authenticate',
} as const;

export type OperationValue = (typeof Operation)[keyof typeof Operation];
