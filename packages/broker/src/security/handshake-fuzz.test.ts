/**
 * A seeded fuzzer of the authentication handshake on a broker with `booblik.auth=required`: each
 * connection sends a random run of AUTHENTICATE steps (good, mutated, out of order, unknown
 * mechanisms, random bytes) mixed with PRODUCEs, in every state the exchange can be in. An oracle
 * that follows only the answers judges each one: a PRODUCE is served only on a connection whose last
 * AUTHENTICATE completed, and is refused AUTHENTICATION_REQUIRED otherwise; at the end the partition
 * holds exactly the records answered NONE (nothing refused was stored), and a fresh client is served.
 * The seed is printed; BOOBLIK_AUTH_FUZZ_SEED replays one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AckPolicy,
  clientFinal,
  clientFirst,
  decodeAuthenticateResponse,
  ErrorCode,
  type ResponseFrame,
} from '@booblik/protocol';
import { ManualClock } from '@booblik/protocol/testing';
import { authenticationTimeoutMs } from '../limits.js';
import { SCRAM, scramLogin } from '../test-support/auth-kit.js';
import { RawClient } from '../test-support/raw-client.js';
import { seeded } from '../test-support/replication-oracle.js';
import { startBroker } from '../test-support/start-broker.js';
import { withEnv } from '../test-support/with-env.js';
import { failureWaitMaxMs } from './failure-limiter.js';

const CONNECTIONS = 12;
const STEPS = 40;
const PASSWORD = 'fuzz-password';

type Step =
  | 'first'
  | 'final'
  | 'finalMutated'
  | 'finalWrongPassword'
  | 'garbage'
  | 'unknownMechanism'
  | 'token'
  | 'produce';
const steps: readonly Step[] = [
  'first',
  'final',
  'finalMutated',
  'finalWrongPassword',
  'garbage',
  'unknownMechanism',
  'token',
  'produce',
  'produce',
];

describe('authentication handshake fuzz', () => {
  it('in every state of the exchange, only an authenticated connection is served, and nothing refused is stored', async (t) => {
    const seed = Number(process.env.BOOBLIK_AUTH_FUZZ_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`seed ${seed} (BOOBLIK_AUTH_FUZZ_SEED=${seed} replays it)`);
    const random = seeded(seed);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const clock = new ManualClock();
    const { port, broker } = await withEnv({ BOOBLIK_BOOTSTRAP_USER: `fuzz:${PASSWORD}` }, () =>
      startBroker(
        t,
        { auth: 'required', topics: [{ name: 't', partitions: 1 }] },
        { clock, wallNowMs: Date.now },
      ),
    );
    let stored = 0;
    for (let c = 0; c < CONNECTIONS; c++) {
      clock.advance(failureWaitMaxMs); // past the waits the last connection's failures earned
      const client = await RawClient.connect(port);
      t.after(() => client.close());
      // Logged in while the unauthenticated close falls due, so the clock can then move freely
      // past the failure limiter's waits; every step below may leave the connection anonymous.
      assert.equal(
        (await scramLogin(client, 'fuzz', PASSWORD)).final.errorCode,
        ErrorCode.NONE,
        `seed ${seed}, connection ${c}`,
      );
      clock.advance(authenticationTimeoutMs);
      let authenticated = true;
      let exchange: { first: ReturnType<typeof clientFirst>; serverFirst: string } | null = null;
      const why = (step: Step, i: number) => `seed ${seed}, connection ${c}, step ${i} (${step})`;
      for (let i = 0; i < STEPS; i++) {
        const step = pick(steps);
        // Past any wait earned by failures: the limiter is tested on its own.
        clock.advance(failureWaitMaxMs);
        let answer: ResponseFrame;
        if (step === 'produce') {
          answer = await client.produce({
            topic: 't',
            partition: 0,
            ack: AckPolicy.WRITTEN,
            records: [Buffer.from(`r${stored}`)],
          });
          assert.equal(
            answer.errorCode,
            authenticated ? ErrorCode.NONE : ErrorCode.AUTHENTICATION_REQUIRED,
            why(step, i),
          );
          if (answer.errorCode === ErrorCode.NONE) stored++;
          continue;
        }
        if (step === 'first') {
          const first = clientFirst(random() < 0.8 ? 'fuzz' : `nobody${c}`);
          answer = await client.authenticate(SCRAM, first.message);
          assert.equal(answer.errorCode, ErrorCode.NONE, why(step, i));
          const body = decodeAuthenticateResponse(answer.body);
          assert.equal(body.complete, false, why(step, i));
          exchange = first.message.includes('n=fuzz,') ? { first, serverFirst: body.data.toString() } : null;
          authenticated = false; // an exchange under way: the old principal is kept only if it completes
          continue;
        }
        if (step === 'final' || step === 'finalMutated' || step === 'finalWrongPassword') {
          const final =
            exchange === null
              ? 'c=biws,r=none,p=AAAA'
              : clientFinal(
                  exchange.first,
                  exchange.serverFirst,
                  step === 'finalWrongPassword' ? 'wrong' : PASSWORD,
                ).message;
          const sent = step === 'finalMutated' ? `${final.slice(0, -6)}AAAA==` : final;
          answer = await client.authenticate(SCRAM, sent);
          const good: boolean = step === 'final' && exchange !== null;
          assert.equal(
            answer.errorCode,
            good ? ErrorCode.NONE : ErrorCode.AUTHENTICATION_FAILED,
            why(step, i),
          );
          authenticated = good;
          exchange = null;
          continue;
        }
        const mechanism =
          step === 'unknownMechanism'
            ? pick(['PLAIN', '', 'scram-sha-256', 'GSSAPI'])
            : step === 'token'
              ? 'TOKEN'
              : SCRAM;
        const data = Buffer.from(
          Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)),
        );
        answer = await client.authenticate(mechanism, data);
        if (step === 'unknownMechanism') {
          // Refused before any exchange is touched: the connection stays as it was.
          assert.equal(answer.errorCode, ErrorCode.INVALID_ARGUMENT, why(step, i));
        } else {
          // Random bytes are never a client-first or a valid token (a token needs keys this broker lacks).
          assert.equal(answer.errorCode, ErrorCode.AUTHENTICATION_FAILED, why(step, i));
          authenticated = false;
          exchange = null;
        }
      }
      client.close();
    }
    assert.equal(
      broker.partitions.get('t', 0)!.highWatermark.value,
      stored,
      `seed ${seed}: exactly the records answered NONE`,
    );
    clock.advance(failureWaitMaxMs);
    const fresh = await RawClient.connect(port);
    t.after(() => fresh.close());
    assert.equal((await scramLogin(fresh, 'fuzz', PASSWORD)).final.errorCode, ErrorCode.NONE);
  });
});
