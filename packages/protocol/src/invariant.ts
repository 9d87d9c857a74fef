/**
 * Assertions for booblik's own bugs, never for the world's input (a socket or a file gets an error code
 * or a closed connection instead). A failed invariant means state that could lose records if carried
 * on with, so its catcher stops the part it guards (a partition, a stream) with the message.
 */
export class InvariantError extends Error {
  override name = 'InvariantError';
}

/** Throws an InvariantError with `message` (a function, so a hot path builds no string) unless `condition`. */
export function invariant(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new InvariantError(message());
}
