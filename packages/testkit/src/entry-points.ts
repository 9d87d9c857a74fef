/**
 * The entry points testkit starts, built by `tsc -b`, found by path: testkit never imports the broker
 * or the CLI, so every package's tests (theirs included) can use it without an arrow running upwards.
 */
export const brokerMain = new URL('../../broker/dist/main.js', import.meta.url).pathname;
export const cliMain = new URL('../../cli/dist/main.js', import.meta.url).pathname;

/** The line a broker prints once it serves: host, port, and the HTTP port if it serves HTTP. */
export const LISTENING_LINE = /booblik listening on (\S+):(\d+)(?:, http on \S+:(\d+))?/;
