/** A FrameSink that records what it is handed, and framing of bodies: for the splitter's and reader's tests. */
import type { FrameSink } from '../frame/splitter.js';
import { lengthPrefixBytes } from '../limits.js';

export type FrameEvent = { frame: string } | { short: number } | { invalid: number };

/** The sink, the events in order (frames as hex, copied at once), and the frame views as handed out. */
export function recordingSink(): { sink: FrameSink; events: FrameEvent[]; views: Buffer[] } {
  const events: FrameEvent[] = [];
  const views: Buffer[] = [];
  const sink: FrameSink = {
    frame: (f) => {
      views.push(f);
      events.push({ frame: Buffer.from(f).toString('hex') });
    },
    shortFrame: (n) => events.push({ short: n }),
    invalidLength: (n) => events.push({ invalid: n }),
  };
  return { sink, events, views };
}

/** `body` behind its length prefix, as it travels. */
export function framed(body: Uint8Array): Buffer {
  const out = Buffer.alloc(lengthPrefixBytes + body.length);
  out.writeInt32BE(body.length, 0);
  out.set(body, lengthPrefixBytes);
  return out;
}

/** The events of `bodies` arriving whole, in order. */
export function framesOf(bodies: readonly Uint8Array[]): FrameEvent[] {
  return bodies.map((b) => ({ frame: Buffer.from(b).toString('hex') }));
}
