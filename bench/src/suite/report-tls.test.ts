/**
 * The report must show what TLS costs where a reader looks: booblik-tls beside booblik with the
 * ratio booblik-tls/booblik, and the floors for W1 (0.8x) and W4 (0.5x) judged on that ratio, with
 * node-floor-tls/node-floor beside it (what TLS costs Node itself). A run without booblik-tls must
 * read as before.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floorTable, headlineTable, type Row, summarize } from './report.js';

const W1 = 'W1 batches of 100';
const W4 = 'W4 read from the start';
const row = (kase: string, system: string, metric: string, unit: string, value: number): Row => ({
  case: kase,
  system,
  metric,
  unit,
  value,
  rep: 1,
});

function run(w1Tls: number, w4Tls: number): Row[] {
  return [
    row(W1, 'booblik', 'records/s', 'records/s', 1_000_000),
    row(W1, 'booblik-tls', 'records/s', 'records/s', w1Tls),
    row(W4, 'booblik', 'read', 'MiB/s', 1000),
    row(W4, 'booblik-tls', 'read', 'MiB/s', w4Tls),
  ];
}

const line = (table: string, start: string) => table.split('\n').find((l) => l.startsWith(start)) ?? '';

test('report: booblik-tls stands beside booblik, with booblik-tls/booblik for W1 and W4', () => {
  const table = headlineTable(summarize(run(900_000, 400)), [], {});
  assert.match(line(table, '| workload'), /\| booblik \| booblik-tls \| booblik-tls\/booblik \|/);
  assert.match(line(table, `| ${W1} | records/s`), /\| \*\*1,000,000\*\* \| 900,000 \| 0\.90x \|/);
  assert.match(line(table, `| ${W4} | read, MiB/s`), /\| \*\*1,000\*\* \| 400 \| 0\.40x \|/);
});

test('report: a run without booblik-tls has no TLS columns', () => {
  const table = headlineTable(summarize(run(900_000, 400).filter((r) => r.system === 'booblik')), [], {});
  assert.doesNotMatch(table, /booblik-tls/);
});

test('report: the TLS floors are judged on booblik-tls/booblik, W1 at 0.8x and W4 at 0.5x', () => {
  const met = floorTable(summarize(run(800_000, 500)));
  assert.ok(!met.missed.some((f) => /TLS/.test(f)), `missed: ${met.missed.join('; ')}`);
  assert.match(line(met.table, '| W1 batches of 100 with TLS'), /0\.80x plaintext .*\| yes \|/);
  const missed = floorTable(summarize(run(790_000, 490))).missed;
  assert.ok(missed.includes('W1 batches of 100 with TLS >= 0.8x plaintext'));
  assert.ok(missed.includes('W4 with TLS >= 0.5x plaintext'));
});

test('report: without booblik-tls in the run the TLS floors are not measured, not missed', () => {
  const { table, missed } = floorTable(summarize(run(1, 1).filter((r) => r.system === 'booblik')));
  assert.ok(!missed.some((f) => /TLS/.test(f)));
  assert.match(line(table, '| W4 with TLS'), /not measured/);
});

test('report: the floor server column of the TLS floors is node-floor-tls/node-floor, from the same run', () => {
  const floors = [
    row(W1, 'node-floor', 'records/s', 'records/s', 2_000_000),
    row(W1, 'node-floor-tls', 'records/s', 'records/s', 1_100_000),
  ];
  const { table } = floorTable(summarize([...run(800_000, 500), ...floors]));
  assert.match(
    line(table, '| W1 batches of 100 with TLS'),
    /0\.80x plaintext \(booblik-tls \/ booblik\) \| yes \| 0\.55x plaintext \(node-floor-tls \/ node-floor\) \| \*\*no\*\* \|/,
  );
  assert.match(line(table, '| W4 with TLS'), /\| yes \| not measured \| — \|$/);
});
