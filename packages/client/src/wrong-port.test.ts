import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Connection } from './connection.js';
import { WrongPortError } from './errors.js';

/** A real HTTP server, as the broker's metrics and health port is: it answers 400 to booblik bytes. */
let server: http.Server;
let address: string;
before(async () => {
  server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a client pointed at an HTTP port', () => {
  it('says the address speaks HTTP and which setting holds the booblik port, not a frame length', async () => {
    const conn = await Connection.connect(address);
    await assert.rejects(conn.metadata(), (e: unknown) => {
      assert.ok(e instanceof WrongPortError, String(e));
      assert.equal(e.message, `${address} speaks HTTP; the booblik port is set by booblik.port`);
      return true;
    });
    assert.equal(conn.state, 'closed');
  });

  it('a consumer does not dial the wrong port again and again: the error reaches the caller', async () => {
    const conn = await Connection.connect(address);
    let dials = 0;
    const consumer = conn.consumer('default', 0, 0, {
      // Bounded, so that a consumer that does retry fails this test quickly instead of hanging it.
      reconnectAttemptsMax: 3,
      reconnectDelayMs: 1,
      dial: () => {
        dials++;
        return Connection.connect(address);
      },
    });
    await assert.rejects(consumer.poll(), WrongPortError);
    assert.equal(dials, 0);
    await consumer.close();
  });
});
