/**
 * With TLS client certificates (mTLS) and authentication required, a verified certificate says who
 * the connection is: its CN is the principal and it is served without AUTHENTICATE; a TLS
 * connection without one must still authenticate.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { AckPolicy, ErrorCode, UsersOp } from '@booblik/protocol';
import { makeCertificates } from '@booblik/testkit';
import { RawClient } from '../test-support/raw-client.js';
import { startBroker } from '../test-support/start-broker.js';

const record = { topic: 't', partition: 0, ack: AckPolicy.WRITTEN, records: [Buffer.from('r')] };

describe('mTLS and authentication', () => {
  it("a verified client certificate's CN is the principal: served at once, a superuser when named one", async (t) => {
    const certs = await makeCertificates(t);
    const { port } = await startBroker(t, {
      auth: 'required',
      authSuperusers: ['alice'],
      tls: 'required',
      tlsCertFile: certs.server.cert,
      tlsKeyFile: certs.server.key,
      tlsCaFile: certs.ca,
      tlsClientAuth: 'requested',
    });
    const ca = fs.readFileSync(certs.ca);
    const alice = await RawClient.connectTls(port, {
      ca,
      cert: fs.readFileSync(certs.client.cert),
      key: fs.readFileSync(certs.client.key),
      servername: 'localhost',
    });
    t.after(() => alice.close());
    assert.equal((await alice.produce(record)).errorCode, ErrorCode.NONE);
    assert.equal((await alice.users({ op: UsersOp.LIST })).errorCode, ErrorCode.NONE, 'alice is a superuser');
    const anonymous = await RawClient.connectTls(port, { ca, servername: 'localhost' });
    t.after(() => anonymous.close());
    assert.equal((await anonymous.produce(record)).errorCode, ErrorCode.AUTHENTICATION_REQUIRED);
  });
});
