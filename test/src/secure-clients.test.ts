/**
 * The clients against a real broker process with TLS and authentication required: each connects
 * with TLS verified against the test CA, logs in with SCRAM-SHA-256, produces, and shows a wrong
 * password as AUTHENTICATION_FAILED by name.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerProcess, makeCertificates } from '@booblik/testkit';
import { buildGoProgram, PYTHON_CLIENT_DIR, runProgram } from './kit/client-programs.js';

const GO_PROGRAM = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	addr, user, password, caFile := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	tlsConfig, err := booblik.NewTLSConfig(booblik.TLSFiles{CAFile: caFile})
	if err != nil {
		fmt.Println("tls config:", err)
		os.Exit(1)
	}
	c, err := booblik.DialWith(ctx, addr, booblik.DialConfig{TLS: tlsConfig, User: user, Password: password})
	if err != nil {
		fmt.Println("refused:", errors.Is(err, booblik.ErrAuthenticationFailed), err)
		return
	}
	defer c.Close()
	r, err := c.Produce(ctx, "secure", 0, [][]byte{[]byte("from-go")}, booblik.AckWritten)
	if err != nil {
		fmt.Println("produce failed:", err)
		os.Exit(1)
	}
	fmt.Println("stored at", r.BaseOffset)
}
`;

const PYTHON_PROGRAM = `
import sys
sys.path.insert(0, sys.argv[1])
from booblik import AckPolicy, AuthenticationFailedError, Connection
from booblik.aio import Connection as AsyncConnection
import asyncio
address, user, password, ca = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
try:
    with Connection.connect(address, tls_ca_file=ca, user=user, password=password) as c:
        r = c.produce("secure", 0, [b"from-python"], AckPolicy.WRITTEN)
        print("stored at", r.base_offset, "as", c.principal)
except AuthenticationFailedError as e:
    print("refused:", type(e).__name__, e)
async def main():
    c = await AsyncConnection.connect(address, tls_ca_file=ca, user=user, password=password)
    try:
        r = await c.produce("secure", 0, [b"from-python-aio"], AckPolicy.WRITTEN)
        print("aio stored at", r.base_offset)
    finally:
        await c.close()
try:
    asyncio.run(main())
except AuthenticationFailedError as e:
    print("aio refused:", type(e).__name__)
`;

let broker: BrokerProcess;
let caFile: string;
const stops: (() => unknown)[] = [];

before(async () => {
  const hooks = { after: (f: unknown) => void stops.push(f as () => unknown) };
  const certs = await makeCertificates(hooks);
  caFile = certs.ca;
  broker = await BrokerProcess.start(hooks, {
    flags: [
      '--auth=required',
      '--topics=secure:1',
      '--tls=required',
      `--tls.cert.file=${certs.server.cert}`,
      `--tls.key.file=${certs.server.key}`,
    ],
    env: { BOOBLIK_BOOTSTRAP_USER: 'app:app-password' },
  });
});
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

test('the Go client connects with TLS, logs in with SCRAM, is served, and names a wrong password AUTHENTICATION_FAILED', async (t) => {
  const program = buildGoProgram(GO_PROGRAM);
  t.after(program.remove);
  const address = `${broker.host}:${broker.port}`;
  const good = await runProgram(program.binary, [address, 'app', 'app-password', caFile]);
  assert.match(good.text, /^stored at \d+$/m, `${good.text}\n${broker.lines.join('\n')}`);
  const bad = await runProgram(program.binary, [address, 'app', 'wrong', caFile]);
  assert.match(bad.text, /^refused: true .*AUTHENTICATION_FAILED/m, bad.text);
  assert.ok(!/\bwrong\b/.test(bad.text), 'the password is not shown');
});

test('the Python client, sync and asyncio, connects with TLS, logs in with SCRAM, is served, and names a wrong password', async () => {
  const address = `${broker.host}:${broker.port}`;
  const good = await runProgram('python3', [
    '-c',
    PYTHON_PROGRAM,
    PYTHON_CLIENT_DIR,
    address,
    'app',
    'app-password',
    caFile,
  ]);
  assert.equal(good.code, 0, good.text);
  assert.match(good.text, /^stored at \d+ as app$/m, good.text);
  assert.match(good.text, /^aio stored at \d+$/m, good.text);
  const bad = await runProgram('python3', [
    '-c',
    PYTHON_PROGRAM,
    PYTHON_CLIENT_DIR,
    address,
    'app',
    'wrong',
    caFile,
  ]);
  assert.match(bad.text, /^refused: AuthenticationFailedError .*invalid user name or password/m, bad.text);
  assert.match(bad.text, /^aio refused: AuthenticationFailedError$/m, bad.text);
});
