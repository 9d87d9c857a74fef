// The clock seam lives in @booblik/protocol so the broker and the log take the same one.
export { type Clock, delay, systemClock, type TimerHandle, unrefTimer } from '@booblik/protocol';
