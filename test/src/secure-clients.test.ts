/**
 * The three clients against a real broker process with authentication required: each logs in with
 * SCRAM-SHA-256, produces and reads back, and shows a wrong password as AUTHENTICATION_FAILED by
 * name, with no record stored for it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerProcess } from '@booblik/testkit';
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
	addr, user, password := os.Args[1], os.Args[2], os.Args[3]
	c, err := booblik.DialWith(ctx, addr, booblik.DialConfig{User: user, Password: password})
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
address, user, password = sys.argv[2], sys.argv[3], sys.argv[4]
try:
    with Connection.connect(address, user=user, password=password) as c:
        r = c.produce("secure", 0, [b"from-python"], AckPolicy.WRITTEN)
        print("stored at", r.base_offset, "as", c.principal)
except AuthenticationFailedError as e:
    print("refused:", type(e).__name__, e)
async def main():
    c = await AsyncConnection.connect(address, user=user, password=password)
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
const stops: (() => unknown)[] = [];

before(async () => {
  broker = await BrokerProcess.start(
    { after: (f) => void stops.push(f as () => unknown) },
    {
      flags: ['--auth=required', '--topics=secure:1'],
      env: { BOOBLIK_BOOTSTRAP_USER: 'app:app-password' },
    },
  );
});
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

test('the Go client logs in with SCRAM, is served, and names a wrong password AUTHENTICATION_FAILED', async (t) => {
  const program = buildGoProgram(GO_PROGRAM);
  t.after(program.remove);
  const address = `${broker.host}:${broker.port}`;
  const good = await runProgram(program.binary, [address, 'app', 'app-password']);
  assert.match(good.text, /^stored at \d+$/m, `${good.text}\n${broker.lines.join('\n')}`);
  const bad = await runProgram(program.binary, [address, 'app', 'wrong']);
  assert.match(bad.text, /^refused: true .*AUTHENTICATION_FAILED/m, bad.text);
  assert.ok(!/\bwrong\b/.test(bad.text), 'the password is not shown');
});

test('the Python client, sync and asyncio, logs in with SCRAM, is served, and names a wrong password', async () => {
  const address = `${broker.host}:${broker.port}`;
  const good = await runProgram('python3', [
    '-c',
    PYTHON_PROGRAM,
    PYTHON_CLIENT_DIR,
    address,
    'app',
    'app-password',
  ]);
  assert.equal(good.code, 0, good.text);
  assert.match(good.text, /^stored at \d+ as app$/m, good.text);
  assert.match(good.text, /^aio stored at \d+$/m, good.text);
  const bad = await runProgram('python3', ['-c', PYTHON_PROGRAM, PYTHON_CLIENT_DIR, address, 'app', 'wrong']);
  assert.match(bad.text, /^refused: AuthenticationFailedError .*invalid user name or password/m, bad.text);
  assert.match(bad.text, /^aio refused: AuthenticationFailedError$/m, bad.text);
});
