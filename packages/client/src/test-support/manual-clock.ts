export { ManualClock } from '@booblik/protocol/testing';
