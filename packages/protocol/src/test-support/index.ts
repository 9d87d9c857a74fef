/** What the tests of any package may use of the protocol's (`@booblik/protocol/testing`). */

export { ManualClock } from './manual-clock.js';
export { type SampleRequest, sampleRequests } from './sample-requests.js';
export { readVectors } from './vectors.js';
