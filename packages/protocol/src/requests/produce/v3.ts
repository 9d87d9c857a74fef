/**
 * PRODUCE request v3 => as v2.  PRODUCE response v3 => as v2.
 * NOT_PRIMARY error body => route:Route (who serves the partition now)
 *
 * The version says the client follows routes: a broker that is not the partition's primary answers
 * NOT_PRIMARY with the current route instead of proxying the request (v1 and v2 are proxied).
 */
import { setRequestVersion } from '../../frame/header.js';
import { encodeProduceRequestV2, type ProduceRequestInputV2 } from './v2.js';

export function encodeProduceRequestV3(correlationId: number, req: ProduceRequestInputV2): Buffer {
  return setRequestVersion(encodeProduceRequestV2(correlationId, req), 3);
}
