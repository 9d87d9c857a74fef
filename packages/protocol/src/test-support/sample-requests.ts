/**
 * A request of every version of every API, from its encoder: the API table's test holds the list to
 * the table (a version it gains must be added here), and the broker's dispatch test sends them all.
 */
import { ApiKey } from '../api.js';
import { encodeApiVersionsRequest } from '../requests/api-versions/v1.js';
import { encodeApplyRequest } from '../requests/apply/v1.js';
import { encodeApplyRequestV2 } from '../requests/apply/v2.js';
import { AuthMechanism, encodeAuthenticateRequest } from '../requests/authenticate/v1.js';
import { encodeFetchRequestV1 } from '../requests/fetch/v1.js';
import { encodeFetchRequestV2 } from '../requests/fetch/v2.js';
import { encodeFetchRequestV3 } from '../requests/fetch/v3.js';
import { encodeFetchRequestV4 } from '../requests/fetch/v4.js';
import { encodeFetchRequestV5 } from '../requests/fetch/v5.js';
import { encodeListRequest, NO_WATCH } from '../requests/list/v1.js';
import { encodeListRequestV2 } from '../requests/list/v2.js';
import { encodeListFragmentsRequest } from '../requests/list-fragments/v1.js';
import { encodeMetadataRequest } from '../requests/metadata/v1.js';
import { encodeMetadataRequestV2 } from '../requests/metadata/v2.js';
import { encodeMetadataRequestV3 } from '../requests/metadata/v3.js';
import { encodeMetadataRequestV4 } from '../requests/metadata/v4.js';
import { encodeMetadataRequestV5 } from '../requests/metadata/v5.js';
import { encodeMoveRequest } from '../requests/move/v1.js';
import { encodeProduceRequest } from '../requests/produce/v1.js';
import { encodeProduceRequestV2 } from '../requests/produce/v2.js';
import { encodeProduceRequestV3 } from '../requests/produce/v3.js';
import { encodeReplicateRequest } from '../requests/replicate/v1.js';
import { encodeUsersRequest, UsersOp } from '../requests/users/v1.js';

export interface SampleRequest {
  apiKey: number;
  version: number;
  /** The whole frame, length prefix included. */
  frame: Buffer;
}

/** Against a fresh broker with topic `t`, each is answered at once; correlation ids count up from `firstId`. */
export function sampleRequests(firstId = 1): SampleRequest[] {
  const records = [Buffer.from('x')];
  const produce = { topic: 't', partition: 0, ack: 1, records } as const;
  const fetch = { topic: 't', partition: 0, fetchOffset: 0, maxBytes: 100, maxWaitMs: 0, minBytes: 0 };
  const metadata = { topics: ['t'], minRevision: 0, flags: 0 };
  const list = { selector: '', watchRevision: NO_WATCH, maxWaitMs: 0 };
  const apply = { dryRun: true, changes: [{ op: 'delete' as const, name: 't', expectedRevision: -1 }] };
  const encoders: [number, number, (id: number) => Buffer][] = [
    [ApiKey.PRODUCE, 1, (id) => encodeProduceRequest(id, produce)],
    [ApiKey.PRODUCE, 2, (id) => encodeProduceRequestV2(id, { ...produce, expectedOffset: 1 })],
    [ApiKey.PRODUCE, 3, (id) => encodeProduceRequestV3(id, { ...produce, expectedOffset: 2 })],
    [ApiKey.FETCH, 1, (id) => encodeFetchRequestV1(id, fetch)],
    [ApiKey.FETCH, 2, (id) => encodeFetchRequestV2(id, fetch)],
    [ApiKey.FETCH, 3, (id) => encodeFetchRequestV3(id, fetch)],
    [ApiKey.FETCH, 4, (id) => encodeFetchRequestV4(id, fetch)],
    [ApiKey.FETCH, 5, (id) => encodeFetchRequestV5(id, { ...fetch, lastEpoch: 0 })],
    [ApiKey.METADATA, 1, (id) => encodeMetadataRequest(id, metadata)],
    [ApiKey.METADATA, 2, (id) => encodeMetadataRequestV2(id, metadata)],
    [ApiKey.METADATA, 3, (id) => encodeMetadataRequestV3(id, metadata)],
    [ApiKey.METADATA, 4, (id) => encodeMetadataRequestV4(id, metadata)],
    [ApiKey.METADATA, 5, (id) => encodeMetadataRequestV5(id, metadata)],
    [ApiKey.APPLY, 1, (id) => encodeApplyRequest(id, apply)],
    [ApiKey.APPLY, 2, (id) => encodeApplyRequestV2(id, apply)],
    [ApiKey.LIST, 1, (id) => encodeListRequest(id, list)],
    [ApiKey.LIST, 2, (id) => encodeListRequestV2(id, list)],
    [ApiKey.API_VERSIONS, 1, (id) => encodeApiVersionsRequest(id)],
    [ApiKey.LIST_FRAGMENTS, 1, (id) => encodeListFragmentsRequest(id, { topic: 't', partition: 0 })],
    [ApiKey.MOVE, 1, (id) => encodeMoveRequest(id, { topic: 't', partition: 0, member: 'b', flags: 0 })],
    [
      ApiKey.REPLICATE,
      1,
      (id) =>
        Buffer.concat(
          encodeReplicateRequest(id, {
            topic: 't',
            partition: 0,
            epoch: 1,
            recordsEpoch: 1,
            baseOffset: 0,
            prevEpoch: 0,
            commitOffset: 0,
            flags: 0,
            count: 1,
            stored: Buffer.from('00000001aabbccdd78', 'hex'),
          }),
        ),
    ],
    [
      ApiKey.AUTHENTICATE,
      1,
      (id) =>
        encodeAuthenticateRequest(id, { mechanism: AuthMechanism.TOKEN, data: Buffer.from('not a token') }),
    ],
    [ApiKey.USERS, 1, (id) => encodeUsersRequest(id, { op: UsersOp.LIST })],
  ];
  return encoders.map(([apiKey, version, encode], i) => ({ apiKey, version, frame: encode(firstId + i) }));
}
