/**
 * The crowd of the overload check, in a process of its own (its own file-descriptor limit, and an
 * event loop apart from the one timing the probe): idle connections that never send a byte, and
 * connections each holding one long fetch at the end of a partition nothing is written to (re-sent
 * whenever it is answered, so it stays held).
 *   node overload-clients.js <port> <idle> <held> <topic>
 * Prints `ready <idle> <held>` once every connection is open and every fetch sent, then waits: a
 * `report` line on stdin prints `closed-by-broker <n> answered-early <n>`; stdin closing ends it.
 */
import net from 'node:net';
import { createInterface } from 'node:readline';
import { encodeFetchRequestV2 } from '@booblik/protocol';

const [portArg, idleArg, heldArg, topic] = process.argv.slice(2);
const port = Number(portArg);
const idle = Number(idleArg);
const held = Number(heldArg);
/** Connections opened at once: the broker's accept backlog is 511. */
const CONNECTING_MAX = 256;
const WAIT_MS = 60_000;

let closedByBroker = 0;
let answeredEarly = 0;
let stopping = false;
const sockets: net.Socket[] = [];

function open(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true }, () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      socket.on('close', () => {
        if (!stopping) closedByBroker++;
      });
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

async function openMany(n: number, each: (socket: net.Socket, i: number) => void): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const socket = await open();
      sockets.push(socket);
      each(socket, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECTING_MAX, n) }, worker));
}

function holdFetch(socket: net.Socket, i: number): void {
  const send = () =>
    socket.write(
      encodeFetchRequestV2(i, {
        topic: topic!,
        partition: 0,
        fetchOffset: 0,
        maxBytes: 1024,
        maxWaitMs: WAIT_MS,
        minBytes: 0,
      }),
    );
  let started = performance.now();
  socket.on('data', () => {
    // Answered: only the wait running out may do that, and then the fetch is held again.
    if (performance.now() - started < WAIT_MS - 1000) answeredEarly++;
    started = performance.now();
    send();
  });
  send();
}

await openMany(idle, () => {});
await openMany(held, holdFetch);
process.stdout.write(`ready ${idle} ${held}\n`);
const report = () => `closed-by-broker ${closedByBroker} answered-early ${answeredEarly}\n`;
// `report` on stdin prints what was seen so far; stdin closing ends the process.
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'report') process.stdout.write(report());
});
process.stdin.on('end', () => {
  stopping = true;
  for (const s of sockets) s.destroy();
  process.exit(0);
});
