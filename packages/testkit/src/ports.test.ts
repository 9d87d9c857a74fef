import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { reservePorts } from './ports.js';

const ephemeralStart = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

describe('test ports', () => {
  it('are below the ephemeral range, so no outgoing connection is given one between release and bind', async () => {
    const reserved = await reservePorts(8);
    try {
      assert.equal(new Set(reserved.map((r) => r.port)).size, 8, 'all distinct');
      for (const r of reserved) assert.ok(r.port < ephemeralStart, `${r.port} is in the ephemeral range`);
    } finally {
      await Promise.all(reserved.map((r) => r.release()));
    }
  });

  it('are held until released, then free for the server that takes them', async () => {
    const [r] = await reservePorts(1);
    assert.equal(await bindable(r!.port), false, 'held: nobody else can bind it');
    await r!.release();
    await r!.release();
    assert.equal(await bindable(r!.port), true, 'released: the server can bind it');
  });
});
