import { DecodeError, type WireReader } from '../codec/reader.js';
import { topicNameProblem } from '../topic-name.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The raw bytes of a topic string; structure only, so later fields can still be read. */
export function readTopicBytes(reader: WireReader, field = 'topic'): Buffer {
  const length = reader.uint16(`${field} length`);
  return reader.bytes(length, field);
}

/** Decodes and validates a topic name read with `readTopicBytes`. */
export function checkTopicName(bytes: Buffer, field = 'topic'): string {
  let name: string;
  try {
    name = utf8.decode(bytes);
  } catch {
    throw new DecodeError(`${field}: not valid UTF-8`);
  }
  const problem = topicNameProblem(name);
  if (problem !== null) throw new DecodeError(`${field}: ${JSON.stringify(name.slice(0, 60))} ${problem}`);
  return name;
}
