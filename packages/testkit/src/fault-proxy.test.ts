import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type FaultProxy, startFaultProxy } from './fault-proxy.js';
import { waitUntil } from './wait.js';

const WAIT_MS = 5000;

/** An echo server that remembers what reached it and keeps its sockets, so a test can push too. */
async function startEcho() {
  const sockets: net.Socket[] = [];
  const seen = { connections: 0, bytes: 0, closed: 0 };
  const server = net.createServer((socket) => {
    seen.connections++;
    sockets.push(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      seen.bytes += chunk.length;
      socket.write(chunk);
    });
    socket.on('close', () => seen.closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    sockets,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A client of the proxy: what came back, and whether (and how) the connection ended. */
function open(address: string) {
  const colon = address.lastIndexOf(':');
  const socket = net.connect({ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) });
  const state = { received: '', closed: false, error: '' };
  socket.on('data', (chunk) => {
    state.received += chunk.toString();
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    state.error = error.code ?? error.message;
  });
  socket.on('close', () => {
    state.closed = true;
  });
  return { socket, state };
}

/** `open`, once connected. */
async function dial(address: string) {
  const c = open(address);
  await new Promise<void>((resolve, reject) => {
    c.socket.once('connect', resolve);
    c.socket.once('error', reject);
  });
  return c;
}

async function roundTrip(address: string, text: string): Promise<void> {
  const c = await dial(address);
  c.socket.write(text);
  await waitUntil(() => c.state.received === text, `"${text}" echoed`, WAIT_MS);
  c.socket.destroy();
}

describe('fault proxy', () => {
  let echo: Awaited<ReturnType<typeof startEcho>>;
  before(async () => {
    echo = await startEcho();
  });
  after(() => echo.close());

  async function proxy(t: { after: (fn: () => Promise<void>) => void }): Promise<FaultProxy> {
    const link = await startFaultProxy({ target: echo.address });
    t.after(() => link.close());
    return link;
  }

  test('pass: bytes go through both ways and are counted; a closed client frees its connection', async (t) => {
    const link = await proxy(t);
    assert.match(link.address, /^127\.0\.0\.1:\d+$/);
    const c = await dial(link.address);
    c.socket.write('hello');
    await waitUntil(() => c.state.received === 'hello', 'echo', WAIT_MS);
    assert.deepEqual(
      { ...link.stats },
      {
        accepted: 1,
        open: 1,
        refused: 0,
        bytesToTarget: 5,
        bytesFromTarget: 5,
        bytesHeld: 0,
        bytesDropped: 0,
      },
    );
    c.socket.end();
    await waitUntil(() => link.stats.open === 0, 'the connection released', WAIT_MS);
  });

  test('delay: a round trip takes the delay each way, and a delay lifted early never reorders bytes', async (t) => {
    const link = await proxy(t);
    const c = await dial(link.address);
    link.delay(150);
    const started = performance.now();
    c.socket.write('slow');
    await waitUntil(() => c.state.received === 'slow', 'the delayed echo', WAIT_MS);
    const elapsedMs = performance.now() - started;
    // Timers may fire a millisecond early; each of the two directions waited its 150 ms.
    assert.ok(elapsedMs >= 2 * 150 - 5, `round trip in ${elapsedMs.toFixed(0)} ms, expected >= 300`);

    // 'b' is sent after the delay is lifted but must still follow the 'a' held back before it.
    link.delay(300);
    c.socket.write('a');
    await waitUntil(() => link.stats.bytesHeld === 1, "'a' held by the delay", WAIT_MS);
    link.pass();
    c.socket.write('b');
    await waitUntil(() => c.state.received.length >= 6, 'a and b echoed', WAIT_MS);
    assert.equal(c.state.received, 'slowab');
    c.socket.destroy();
  });

  test('cut: open connections are reset and new ones refused at once; heal lets them through', async (t) => {
    const link = await proxy(t);
    const established = await dial(link.address);
    established.socket.write('x');
    await waitUntil(() => established.state.received === 'x', 'echo before the cut', WAIT_MS);
    const connectionsBefore = echo.seen.connections;

    link.cut();
    await waitUntil(() => established.state.closed, 'the open connection reset', WAIT_MS);
    assert.equal(established.state.error, 'ECONNRESET');

    // Reset right after the accept: the client may see it as its connect failing or just after.
    const refused = open(link.address);
    refused.socket.write('y');
    await waitUntil(() => refused.state.closed, 'a new connection reset', WAIT_MS);
    assert.equal(refused.state.error, 'ECONNRESET');
    assert.equal(refused.state.received, '');
    assert.equal(link.stats.refused, 1);
    assert.equal(echo.seen.connections, connectionsBefore, 'nothing reached the target while cut');

    link.heal();
    await roundTrip(link.address, 'healed');
  });

  test('blackhole: bytes both ways are swallowed, nothing closes; heal resets the damaged and serves new ones', async (t) => {
    const link = await proxy(t);
    const c = await dial(link.address);
    c.socket.write('before');
    await waitUntil(() => c.state.received === 'before', 'echo before the black hole', WAIT_MS);
    const server = echo.sockets.at(-1)!;
    const bytesAtTarget = echo.seen.bytes;
    const closedAtTarget = echo.seen.closed;

    link.blackhole();
    c.socket.write('lost');
    await waitUntil(() => link.stats.bytesDropped === 4, 'the client bytes dropped', WAIT_MS);
    server.write('push');
    await waitUntil(() => link.stats.bytesDropped === 8, 'the target bytes dropped', WAIT_MS);
    const during = await dial(link.address);
    during.socket.write('new');
    await waitUntil(() => link.stats.bytesDropped === 11, 'a new connection swallowed', WAIT_MS);

    assert.equal(echo.seen.bytes, bytesAtTarget, 'nothing reached the target');
    assert.equal(c.state.received, 'before', 'nothing came back');
    assert.equal(c.state.closed, false, 'the client connection stays open');
    assert.equal(during.state.closed, false, 'the new connection stays open');
    assert.equal(echo.seen.closed, closedAtTarget, 'the target connection stays open');
    assert.equal(link.stats.bytesToTarget, 6);

    link.heal();
    await waitUntil(() => c.state.closed && during.state.closed, 'the damaged connections reset', WAIT_MS);
    await roundTrip(link.address, 'after');
  });

  test('a connection to a target that is down is reset, as the target would', async (t) => {
    const down = await startEcho();
    await down.close();
    const link = await startFaultProxy({ target: down.address });
    t.after(() => link.close());
    const c = await dial(link.address);
    await waitUntil(() => c.state.closed, 'the connection closed', WAIT_MS);
    assert.equal(c.state.error, 'ECONNRESET');
  });

  test('close: every connection through it ends and the port stops listening', async () => {
    const link = await startFaultProxy({ target: echo.address });
    const c = await dial(link.address);
    c.socket.write('z');
    await waitUntil(() => c.state.received === 'z', 'echo', WAIT_MS);
    await link.close();
    await waitUntil(() => c.state.closed, 'the connection closed', WAIT_MS);
    await assert.rejects(dial(link.address), /ECONNREFUSED/);
  });

  test('a target that is not host:port is refused with the reason', async () => {
    await assert.rejects(startFaultProxy({ target: 'nowhere' }), /target: "nowhere", expected host:port/);
  });
});
