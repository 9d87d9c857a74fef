/**
 * CRC-32C throughput: the TypeScript table (slicing-by-16), booblik's own native module and the npm
 * package @node-rs/crc32, at 64 B, 1 KiB and 1 MiB, and the dispatching `crc32c` the broker and client
 * use. Each cell is several timed runs
 * of ~0.3 s; the table prints min / median / max MiB/s.
 *
 *   npm run bench:crc
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { crc32c, crc32cNative, crc32cTable, nativeAddon } from '@booblik/protocol';
import { fmt, spread } from './stats.js';

const sizes = [64, 1024, 1 << 20];
const runs = Number(process.env.RUNS ?? 7);
const runSeconds = 0.3;

type Impl = { name: string; fn: (buf: Buffer, start: number, end: number) => number };
const impls: Impl[] = [{ name: 'typescript (slicing-by-16)', fn: crc32cTable }];
if (nativeAddon) {
  const addon = nativeAddon;
  impls.push({ name: `booblik native module (${addon.crcKind})`, fn: (b, s, e) => addon.crc32c(b, s, e) });
}
if (crc32cNative) {
  const native = crc32cNative;
  impls.push({ name: '@node-rs/crc32 (npm, prebuilt)', fn: (b, s, e) => native(b.subarray(s, e)) });
}
impls.push({ name: 'crc32c() as dispatched', fn: crc32c });

function measure(fn: Impl['fn'], size: number): number {
  // An offset start, as records sit inside a larger buffer.
  const buf = Buffer.alloc(size + 8);
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 31) & 0xff;
  let sink = 0;
  const deadline = process.hrtime.bigint() + BigInt(runSeconds * 1e9);
  const started = process.hrtime.bigint();
  let calls = 0;
  const batch = Math.max(1, Math.floor((1 << 22) / size));
  while (process.hrtime.bigint() < deadline) {
    for (let i = 0; i < batch; i++) sink ^= fn(buf, 3, 3 + size);
    calls += batch;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (sink === 0.5) console.log(sink); // keep the result alive
  return (calls * size) / (1 << 20) / seconds;
}

/** One implementation, in this process alone, so the JIT sees a single call target. */
function row(impl: Impl): string {
  measure(impl.fn, 64); // warm up the JIT
  const cells = sizes.map((size) => {
    const s = spread(Array.from({ length: runs }, () => measure(impl.fn, size)));
    return `${fmt(s.min)} / **${fmt(s.median)}** / ${fmt(s.max)}`;
  });
  return `| ${impl.name} | ${cells.join(' | ')} |`;
}

const only = process.argv[2];
if (only !== undefined) {
  console.log(row(impls[Number(only)]!));
} else {
  console.log(
    `# CRC-32C MiB/s, ${runs} runs of ${runSeconds}s each (min / median / max); node ${process.version}`,
  );
  console.log('| implementation | 64 B | 1 KiB | 1 MiB |');
  console.log('|---|---:|---:|---:|');
  for (let i = 0; i < impls.length; i++) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), String(i)], {
      encoding: 'utf8',
    });
    process.stdout.write(out);
  }
}
