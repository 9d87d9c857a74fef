/** The line `produce` ends with: how many records landed, and the first and last offset per partition. */
export class OffsetSpans {
  private readonly spans = new Map<number, { first: number; last: number }>();

  add(partition: number, offset: number): void {
    const span = this.spans.get(partition);
    if (!span) this.spans.set(partition, { first: offset, last: offset });
    else {
      span.first = Math.min(span.first, offset);
      span.last = Math.max(span.last, offset);
    }
  }

  /** `produced 3 record(s) to orders: partition 0 offsets 0..2`; under ack none no offset is known. */
  summary(topic: string, records: number, ackNone: boolean): string {
    if (ackNone) return `produced ${records} record(s) to ${topic} (ack none: offsets unknown)`;
    const parts = [...this.spans.entries()]
      .sort(([a], [b]) => a - b)
      .map(
        ([p, { first, last }]) =>
          `partition ${p} ${first === last ? `offset ${first}` : `offsets ${first}..${last}`}`,
      );
    return `produced ${records} record(s) to ${topic}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
  }
}
