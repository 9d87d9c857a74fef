/**
 * The machine's own limits, as anchors beside the brokers' figures: loopback TCP throughput between
 * two processes, request/response round trips with one in flight, page-cache write bandwidth and the
 * fdatasync rate of small appends. Every loop is bounded by a count and a time.
 *
 *   node bench/dist/suite/physical.js '{"dataDir": "...", "seconds": 3, "writeBytes": 1073741824}'
 *
 * Prints one JSON line { figures: [...] } like the load generator. The TCP peer is this same file,
 * forked with PHYSICAL_PEER set.
 */
import { fork } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile } from '../stats.js';
import type { Figure } from './loadgen.js';
import { nowNs } from './wire/socket.js';

interface PhysicalSpec {
  dataDir: string;
  /** Seconds per TCP probe and upper bound of the fdatasync probe. */
  seconds: number;
  /** Bytes written sequentially for the page-cache probe. */
  writeBytes: number;
}

const REPLY_BYTES = 16;
const REQUEST_BYTES = 128;

if (process.env.PHYSICAL_PEER === 'relay') {
  // A primary's shape with nothing of its work: each 128-byte request goes on to two echo processes
  // (PHYSICAL_RELAY_TO: their ports), and is answered once both have answered.
  const reply = Buffer.alloc(REPLY_BYTES, 1);
  const onward = (process.env.PHYSICAL_RELAY_TO ?? '')
    .split(',')
    .map((port) => net.connect({ port: Number(port), host: '127.0.0.1', noDelay: true }));
  const srv = net.createServer((sock) => {
    sock.setNoDelay(true);
    let pending = 0;
    const answered: number[] = onward.map(() => 0);
    for (const [i, o] of onward.entries()) {
      o.on('data', (d: Buffer) => {
        answered[i]! += d.length;
        while (answered.every((n) => n >= REPLY_BYTES)) {
          for (let j = 0; j < answered.length; j++) answered[j]! -= REPLY_BYTES;
          sock.write(reply);
        }
      });
    }
    const forward = Buffer.alloc(REQUEST_BYTES, 5);
    sock.on('data', (d: Buffer) => {
      pending += d.length;
      while (pending >= REQUEST_BYTES) {
        pending -= REQUEST_BYTES;
        for (const o of onward) o.write(forward);
      }
    });
    sock.on('end', () => sock.end());
  });
  srv.listen(0, '127.0.0.1', () => process.send!({ port: (srv.address() as net.AddressInfo).port }));
  process.on('message', (m) => m === 'exit' && process.exit(0));
  setTimeout(() => process.exit(3), 120_000).unref();
} else if (process.env.PHYSICAL_PEER) {
  // The server side: counts a stream, or answers every 128-byte request with 16 bytes.
  const reply = Buffer.alloc(REPLY_BYTES, 1);
  const srv = net.createServer((sock) => {
    sock.setNoDelay(true);
    let bytes = 0;
    let t0 = 0;
    let pending = 0;
    sock.on('data', (d: Buffer) => {
      if (process.env.PHYSICAL_PEER === 'stream') {
        if (t0 === 0) t0 = nowNs();
        bytes += d.length;
        return;
      }
      pending += d.length;
      while (pending >= REQUEST_BYTES) {
        pending -= REQUEST_BYTES;
        sock.write(reply);
      }
    });
    sock.on('end', () => {
      if (process.env.PHYSICAL_PEER === 'stream') process.send!({ bytes, seconds: (nowNs() - t0) / 1e9 });
      sock.end();
    });
  });
  srv.listen(0, '127.0.0.1', () => process.send!({ port: (srv.address() as net.AddressInfo).port }));
  process.on('message', (m) => m === 'exit' && process.exit(0));
  setTimeout(() => process.exit(3), 120_000).unref();
} else {
  const spec = JSON.parse(process.argv[2] ?? '{}') as PhysicalSpec;
  const figures: Figure[] = [];
  const emit = (metric: string, unit: string, value: number) => figures.push({ metric, unit, value });

  const withPeer = async <T>(
    mode: string,
    run: (sock: net.Socket, peer: ReturnType<typeof fork>, port: number) => Promise<T>,
    env: Record<string, string> = {},
  ) => {
    const peer = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, ...env, PHYSICAL_PEER: mode },
    });
    try {
      const port = await new Promise<number>((resolve) =>
        peer.once('message', (m) => resolve((m as { port: number }).port)),
      );
      const sock = net.connect({ port, host: '127.0.0.1', noDelay: true });
      await new Promise((r) => sock.once('connect', r));
      return await run(sock, peer, port);
    } finally {
      peer.send('exit');
      await new Promise((r) => {
        peer.once('exit', r);
        setTimeout(() => {
          peer.kill('SIGKILL');
          r(undefined);
        }, 2000).unref();
      });
    }
  };

  // 1. One-way loopback throughput, 256 KiB writes, measured by the receiver.
  await withPeer('stream', async (sock, peer) => {
    const chunk = Buffer.alloc(256 * 1024, 7);
    const t0 = nowNs();
    let sent = 0;
    await new Promise<void>((resolve) => {
      const pump = () => {
        while (sent < 64 * 2 ** 30 && nowNs() - t0 < spec.seconds * 1e9) {
          sent += chunk.length;
          if (!sock.write(chunk)) {
            sock.once('drain', pump);
            return;
          }
        }
        resolve();
      };
      pump();
    });
    const result = new Promise<{ bytes: number; seconds: number }>((r) =>
      peer.once('message', (m) => r(m as { bytes: number; seconds: number })),
    );
    sock.end();
    const { bytes, seconds } = await result;
    emit('loopback TCP, one stream', 'MiB/s', Math.round(bytes / 1048576 / seconds));
  });

  /** Round trips with one request in flight for spec.seconds: the sorted latencies and the rate. */
  const pingPong = async (sock: net.Socket) => {
    const request = Buffer.alloc(REQUEST_BYTES, 3);
    const lat: number[] = [];
    const t0 = nowNs();
    await new Promise<void>((resolve) => {
      let got = 0;
      let ts = nowNs();
      sock.on('data', (d: Buffer) => {
        got += d.length;
        while (got >= REPLY_BYTES) {
          got -= REPLY_BYTES;
          lat.push(nowNs() - ts);
          if (lat.length >= 1_000_000 || nowNs() - t0 >= spec.seconds * 1e9) return resolve();
          ts = nowNs();
          sock.write(request);
        }
      });
      sock.write(request);
    });
    const seconds = (nowNs() - t0) / 1e9;
    lat.sort((a, b) => a - b);
    sock.end();
    return { lat, perSecond: Math.round(lat.length / seconds) };
  };

  // 2. Round trips with one request in flight (the ceiling of any one-at-a-time workload).
  await withPeer('pingpong', async (sock) => {
    const { lat, perSecond } = await pingPong(sock);
    emit('loopback round trips, one in flight', 'round trips/s', perSecond);
    emit('loopback round trip p50', 'µs', Math.round(quantile(lat, 0.5) / 1e3));
  });

  // 2a. The same through a relay that waits for two echo processes: four processes, the shape of a
  //     replicated acknowledgement (client, primary, two replicas) with none of a broker's work, so
  //     an R=3 acknowledgement can be read against it.
  await withPeer('pingpong', (_a, _peerA, first) =>
    withPeer('pingpong', async (_b, _peerB, second) => {
      const ports = [first, second];
      return withPeer(
        'relay',
        async (sock) => {
          const { lat } = await pingPong(sock);
          emit(
            'loopback relay to two echoes, one in flight, p50',
            'µs',
            Math.round(quantile(lat, 0.5) / 1e3),
          );
        },
        { PHYSICAL_RELAY_TO: ports.join(',') },
      );
    }),
  );

  // 2b. The open loop of W5 against the echo process: what the measuring itself costs at 5,000/s
  //     (busy polling, scheduling on a shared 2-core machine), so W5 figures can be read against it.
  await withPeer('pingpong', async (sock) => {
    const request = Buffer.alloc(REQUEST_BYTES, 3);
    const rate = 5000;
    const count = Math.round(rate * spec.seconds);
    const intervalNs = 1e9 / rate;
    const intended: number[] = [];
    const lat: number[] = [];
    let got = 0;
    const t0 = nowNs() + 1e6;
    await new Promise<void>((resolve) => {
      sock.on('data', (d: Buffer) => {
        got += d.length;
        while (got >= REPLY_BYTES) {
          got -= REPLY_BYTES;
          lat.push(nowNs() - intended[lat.length]!);
          if (lat.length === count) resolve();
        }
      });
      const turn = () => {
        const now = nowNs();
        while (intended.length < count && t0 + intended.length * intervalNs <= now) {
          intended.push(t0 + intended.length * intervalNs);
          sock.write(request);
        }
        if (nowNs() - t0 > (spec.seconds + 5) * 1e9) resolve();
        else if (intended.length < count) setImmediate(turn);
      };
      turn();
    });
    lat.sort((a, b) => a - b);
    emit('open loop 5,000/s to an echo, p50', 'µs', Math.round(quantile(lat, 0.5) / 1e3));
    emit('open loop 5,000/s to an echo, p99', 'µs', Math.round(quantile(lat, 0.99) / 1e3));
    sock.end();
  });

  // 2c. A round trip after 100 ms of silence, as a long-poll wake-up sees it: both processes were
  //     asleep, and on a VM an idle virtual CPU takes time to wake (W6 can be no faster than this).
  await withPeer('pingpong', async (sock) => {
    const request = Buffer.alloc(REQUEST_BYTES, 3);
    const lat: number[] = [];
    const count = Math.max(10, Math.round(spec.seconds * 10));
    let got = 0;
    let resolveOne: (() => void) | undefined;
    sock.on('data', (d: Buffer) => {
      got += d.length;
      if (got >= REPLY_BYTES) {
        got -= REPLY_BYTES;
        resolveOne?.();
      }
    });
    for (let i = 0; i < count; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const ts = nowNs();
      await new Promise<void>((resolve) => {
        resolveOne = resolve;
        sock.write(request);
      });
      lat.push(nowNs() - ts);
    }
    lat.sort((a, b) => a - b);
    emit('round trip after 100 ms idle, p50', 'µs', Math.round(quantile(lat, 0.5) / 1e3));
    emit('round trip after 100 ms idle, p99', 'µs', Math.round(quantile(lat, 0.99) / 1e3));
    sock.end();
  });

  // 3. Sequential buffered writes of random data. The first pass grows the page cache (on a VM that
  //    hands idle memory back to its host, every new page faults in again); the second overwrites the
  //    same pages, the rate a log sees once the cache is warm. Then the fdatasync that follows.
  const file = path.join(spec.dataDir, 'physical-seq');
  {
    const chunk = crypto.randomBytes(1 << 20);
    const fd = fs.openSync(file, 'w');
    const pass = () => {
      const t0 = nowNs();
      let written = 0;
      while (written < spec.writeBytes && nowNs() - t0 < 120e9) {
        written += fs.writeSync(fd, chunk, 0, Math.min(chunk.length, spec.writeBytes - written), written);
      }
      return { written, seconds: (nowNs() - t0) / 1e9 };
    };
    const cold = pass();
    const warm = pass();
    const t1 = nowNs();
    fs.fdatasyncSync(fd);
    const syncSeconds = (nowNs() - t1) / 1e9;
    fs.closeSync(fd);
    fs.rmSync(file);
    emit('page-cache write, new pages', 'MiB/s', Math.round(cold.written / 1048576 / cold.seconds));
    emit('page-cache write, warm pages', 'MiB/s', Math.round(warm.written / 1048576 / warm.seconds));
    emit(
      'sequential write incl. fdatasync',
      'MiB/s',
      Math.round(warm.written / 1048576 / (warm.seconds + syncSeconds)),
    );
  }

  // 4. fdatasync rate: append 128 bytes, fdatasync, repeat (the ceiling of one durable producer).
  {
    const record = crypto.randomBytes(128);
    const fd = fs.openSync(file, 'w');
    const t0 = nowNs();
    let n = 0;
    while (n < 100_000 && nowNs() - t0 < spec.seconds * 1e9) {
      fs.writeSync(fd, record);
      fs.fdatasyncSync(fd);
      n++;
    }
    const seconds = (nowNs() - t0) / 1e9;
    fs.closeSync(fd);
    fs.rmSync(file);
    emit('fdatasync, 128 B appends', 'syncs/s', Math.round(n / seconds));
  }

  process.stdout.write(`${JSON.stringify({ figures, notes: [] })}\n`);
  process.exit(0);
}
