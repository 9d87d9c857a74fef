/**
 * The three clients against a real broker process with authentication required: each logs in with
 * SCRAM-SHA-256, produces and reads back, and shows a wrong password as AUTHENTICATION_FAILED by
 * name, with no record stored for it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerProcess } from '@booblik/testkit';
import { buildGoProgram, runProgram } from './kit/client-programs.js';

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
