/**
 * FETCH request v3 => as v2.  FETCH response v3 => as v1.
 *
 * The version says the client follows routes: a broker that is not the partition's primary answers
 * NOT_PRIMARY with the current route (see PRODUCE v3) instead of proxying the request.
 */
import { setRequestVersion } from '../../frame/header.js';
import type { FetchRequest } from './v1.js';
import { encodeFetchRequestV2 } from './v2.js';

export function encodeFetchRequestV3(correlationId: number, req: FetchRequest): Buffer {
  return setRequestVersion(encodeFetchRequestV2(correlationId, req), 3);
}
