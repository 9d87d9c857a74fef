/** Errors of the `booblik` command. Failures of the client keep their own classes (from @booblik/client). */

/** The command line is wrong; the message says which argument and what was expected. Exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Input on stdin that cannot be read as records (a length prefix cut short, a negative length). */
export class InputError extends Error {
  override name = 'InputError';
}

/** The partition asked for is not among the topic's partitions. */
export class PartitionNotFoundError extends Error {
  override name = 'PartitionNotFoundError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly partitions: readonly number[],
  ) {
    super(`topic ${topic} has no partition ${partition} (it has ${partitions.join(', ') || 'none'})`);
  }
}

/** A start offset outside what the partition holds: [logStartOffset, highWatermark]. */
export class OffsetOutOfRangeError extends Error {
  override name = 'OffsetOutOfRangeError';
  constructor(
    readonly offset: number,
    readonly logStartOffset: number,
    readonly highWatermark: number,
  ) {
    super(`offset ${offset} is outside the partition's range ${logStartOffset}..${highWatermark}`);
  }
}

/** A topic named on the command line that the broker does not have. */
export class TopicNotFoundError extends Error {
  override name = 'TopicNotFoundError';
  constructor(readonly topics: readonly string[]) {
    super(`no topic ${topics.join(', ')}`);
  }
}
