/**
 * The floor of a broker on Node's socket streams, run by the suite beside the brokers (system
 * `node-floor`) so that a figure behind Redis can be told apart from what Node itself costs here.
 *
 * It does the least a Node server must do to serve the suite's workloads through booblik's wire: per
 * request it splits the frame and reads its header; a PRODUCE's records get their CRC-32C and go to
 * the log file in one `pwrite` at its end, then the answer; FORCED answers follow one `fdatasync` per
 * turn of the event loop, on the loop's own thread, for every FORCED request of that turn (what Redis
 * does for `appendfsync always`); a FETCH at the log's end waits for the next write, which answers
 * it. Nothing else: no name validation, one partition, no index but one file position per PRODUCE
 * (a FETCH finds its record from there), no metrics, no tail cache, no recovery. It is not a broker and nothing outside the suite
 * uses it. With a certificate and key it serves TLS only (system `node-floor-tls`): what Node's TLS
 * costs here, with nothing of a broker's on top.
 *
 *   node bench/dist/suite/node-floor.js --data.dir=DIR [--tls.cert.file=PEM --tls.key.file=PEM]
 *                                                  prints "node-floor listening on 127.0.0.1:PORT"
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { AckPolicy, ApiKey, ErrorCode, storedBytesOf, writeStoredRecords } from '@booblik/protocol';

const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(`--${name}=`.length);
const dataDir = flag('data.dir');
if (!dataDir) throw new Error('usage: node-floor.js --data.dir=DIR');
const tlsCert = flag('tls.cert.file');
const tlsKey = flag('tls.key.file');
const fd = fs.openSync(path.join(dataDir, 'log'), 'w+');
let fileEnd = 0;
let logEnd = 0;
/** Each PRODUCE's first offset and its file position, in order: the least index a read needs. */
const batchBases: number[] = [];
const batchPositions: number[] = [];

/** The file position of record `offset` (0 < offset < logEnd): its PRODUCE's, then its records walked. */
function positionOf(offset: number): number {
  let lo = 0;
  let hi = batchBases.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (batchBases[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  let position = batchPositions[lo]!;
  const batchEnd = lo + 1 < batchPositions.length ? batchPositions[lo + 1]! : fileEnd;
  const batch = Buffer.allocUnsafe(batchEnd - position);
  fs.readSync(fd, batch, 0, batch.length, position);
  for (let at = 0, skip = offset - batchBases[lo]!; skip > 0; skip--) {
    const step = 8 + batch.readInt32BE(at);
    at += step;
    position += step;
  }
  return position;
}

/** Answers of one connection, written in request order: a held answer holds back those after it. */
class Connection {
  private readonly queue: { answer: Buffer | null }[] = [];
  private pending: Buffer | null = null;
  constructor(readonly socket: net.Socket) {}

  /** Writes `answer` now when nothing before it is held; otherwise queues it. */
  answer(answer: Buffer): void {
    if (this.queue.length === 0) this.socket.write(answer);
    else this.queue.push({ answer });
  }

  /** Keeps the next answer's place; the function returned fills it, and writes what became ready. */
  reserve(): (answer: Buffer) => void {
    const slot: { answer: Buffer | null } = { answer: null };
    this.queue.push(slot);
    return (answer) => {
      slot.answer = answer;
      while (this.queue.length > 0 && this.queue[0]!.answer !== null)
        this.socket.write(this.queue.shift()!.answer!);
    };
  }

  /** Whole frames out of what arrived; the rest waits for the next chunk. */
  frames(chunk: Buffer, each: (frame: Buffer) => void): void {
    let buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    let pos = 0;
    while (buf.length - pos >= 4) {
      const length = buf.readInt32BE(pos);
      if (length < 8 || length > 8 * 2 ** 20) {
        this.socket.destroy();
        return;
      }
      if (buf.length - pos - 4 < length) break;
      each(buf.subarray(pos, pos + 4 + length));
      pos += 4 + length;
    }
    buf = buf.subarray(pos);
    this.pending = buf.length > 0 ? Buffer.from(buf) : null;
  }
}

/** An int64 without a BigInt (offsets stay far below 2^53). */
function writeInt64(b: Buffer, value: number, at: number): void {
  b.writeUInt32BE(Math.floor(value / 2 ** 32), at);
  b.writeUInt32BE(value >>> 0, at + 4);
}

function errorAnswer(correlationId: number, code: number): Buffer {
  const b = Buffer.allocUnsafe(10);
  b.writeInt32BE(6, 0);
  b.writeInt32BE(correlationId, 4);
  b.writeInt16BE(code, 8);
  return b;
}

function produceAnswer(correlationId: number, base: number, end: number): Buffer {
  const b = Buffer.allocUnsafe(26);
  b.writeInt32BE(22, 0);
  b.writeInt32BE(correlationId, 4);
  b.writeInt16BE(0, 8);
  writeInt64(b, base, 10);
  writeInt64(b, end, 18);
  return b;
}

function fetchAnswer(correlationId: number, payload: Buffer): Buffer {
  const b = Buffer.allocUnsafe(22 + payload.length);
  b.writeInt32BE(18 + payload.length, 0);
  b.writeInt32BE(correlationId, 4);
  b.writeInt16BE(0, 8);
  writeInt64(b, logEnd, 10);
  b.writeInt32BE(payload.length, 18);
  payload.copy(b, 22);
  return b;
}

// ------------------------------------------------------------------------------- FORCED, per turn

let forcedDue: { fill: (b: Buffer) => void; correlationId: number; answer: Buffer }[] = [];
let syncScheduled = false;
/** After this turn's reads: one fdatasync for all of them, then their answers. */
function syncThisTurn(): void {
  syncScheduled = false;
  const due = forcedDue;
  forcedDue = [];
  let failed = false;
  try {
    fs.fdatasyncSync(fd);
  } catch {
    failed = true;
  }
  for (const d of due) d.fill(failed ? errorAnswer(d.correlationId, ErrorCode.STORAGE_ERROR) : d.answer);
}

// ---------------------------------------------------------------------------------- held FETCHes

interface Held {
  fill: (b: Buffer) => void;
  correlationId: number;
  offset: number;
  maxBytes: number;
  timer: NodeJS.Timeout;
}
let held: Held[] = [];

function wakeHeld(base: number, stored: Buffer): void {
  const waiting = held;
  held = [];
  for (const h of waiting) {
    clearTimeout(h.timer);
    const payload = h.offset === base ? stored.subarray(0, h.maxBytes) : Buffer.alloc(0);
    h.fill(fetchAnswer(h.correlationId, payload));
  }
}

// ------------------------------------------------------------------------------------- requests

function topicEnd(frame: Buffer): number {
  return 14 + frame.readUInt16BE(12);
}

function produce(c: Connection, frame: Buffer, correlationId: number): void {
  let pos = topicEnd(frame) + 4; // partition
  const ack = frame.readInt8(pos);
  const count = frame.readInt32BE(pos + 1);
  pos += 5;
  const start = pos;
  for (let i = 0; i < count; i++) pos += 4 + frame.readInt32BE(pos);
  if (count <= 0 || pos > frame.length) {
    if (ack !== AckPolicy.NONE) c.answer(errorAnswer(correlationId, ErrorCode.CORRUPT_REQUEST));
    return;
  }
  // The records with their CRC-32C in one native call, as the broker stores them.
  const records = frame.subarray(start, pos);
  const stored = Buffer.allocUnsafe(storedBytesOf(records, count));
  writeStoredRecords(records, count, stored, 0);
  fs.writeSync(fd, stored, 0, stored.length, fileEnd);
  batchBases.push(logEnd);
  batchPositions.push(fileEnd);
  fileEnd += stored.length;
  const base = logEnd;
  logEnd += count;
  if (held.length > 0) wakeHeld(base, stored);
  if (ack === AckPolicy.NONE) return;
  const answer = produceAnswer(correlationId, base, logEnd);
  if (ack !== AckPolicy.FORCED) {
    c.answer(answer);
    return;
  }
  forcedDue.push({ fill: c.reserve(), correlationId, answer });
  if (!syncScheduled) {
    syncScheduled = true;
    setImmediate(syncThisTurn);
  }
}

function fetch(c: Connection, frame: Buffer, correlationId: number, version: number): void {
  const pos = topicEnd(frame) + 4;
  const offset = frame.readUInt32BE(pos) * 2 ** 32 + frame.readUInt32BE(pos + 4);
  const maxBytes = frame.readInt32BE(pos + 8);
  const waitMs = version >= 2 ? frame.readInt32BE(pos + 12) : 0;
  if (offset >= 0 && offset < logEnd) {
    const from = offset === 0 ? 0 : positionOf(offset);
    const payload = Buffer.allocUnsafe(Math.min(maxBytes, fileEnd - from));
    fs.readSync(fd, payload, 0, payload.length, from);
    c.answer(fetchAnswer(correlationId, payload));
  } else if (offset !== logEnd) c.answer(errorAnswer(correlationId, ErrorCode.OFFSET_OUT_OF_RANGE));
  else if (waitMs <= 0) c.answer(fetchAnswer(correlationId, Buffer.alloc(0)));
  else hold(c, correlationId, offset, maxBytes, waitMs);
}

function hold(c: Connection, correlationId: number, offset: number, maxBytes: number, waitMs: number): void {
  const fill = c.reserve();
  const h: Held = {
    fill,
    correlationId,
    offset,
    maxBytes,
    timer: setTimeout(() => {
      held = held.filter((x) => x !== h);
      fill(fetchAnswer(correlationId, Buffer.alloc(0)));
    }, waitMs),
  };
  held.push(h);
}

function serve(socket: net.Socket): void {
  socket.setNoDelay(true);
  const c = new Connection(socket);
  socket.on('data', (chunk: Buffer) =>
    c.frames(chunk, (frame) => {
      const apiKey = frame.readInt16BE(4);
      const version = frame.readInt16BE(6);
      const correlationId = frame.readInt32BE(8);
      try {
        if (apiKey === ApiKey.PRODUCE) produce(c, frame, correlationId);
        else if (apiKey === ApiKey.FETCH) fetch(c, frame, correlationId, version);
        else c.answer(errorAnswer(correlationId, ErrorCode.UNSUPPORTED_VERSION));
      } catch {
        c.answer(errorAnswer(correlationId, ErrorCode.CORRUPT_REQUEST));
      }
    }),
  );
  socket.on('error', () => socket.destroy());
}

const server =
  tlsCert && tlsKey
    ? tls.createServer({ cert: fs.readFileSync(tlsCert), key: fs.readFileSync(tlsKey) }, serve)
    : net.createServer(serve);
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as net.AddressInfo;
  process.stdout.write(`node-floor listening on 127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
