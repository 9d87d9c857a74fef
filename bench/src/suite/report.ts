/**
 * Turning runs into what people read: medians per (case, system, metric), a table with the ratio of
 * ours to each peer, the floors of the issue checked against the medians, and an SVG chart drawn here
 * (a few rectangles and labels need no charting library).
 */
import { fmt, type Spread, spread } from '../stats.js';

export interface Row {
  /** Workload case, e.g. "W1 batches of 100". */
  case: string;
  system: string;
  metric: string;
  unit: string;
  value: number;
  rep: number;
}

export interface Summary {
  case: string;
  system: string;
  metric: string;
  unit: string;
  spread: Spread;
}

export function summarize(rows: readonly Row[]): Summary[] {
  const groups = new Map<string, { r: Row; values: number[] }>();
  for (const r of rows) {
    if (!Number.isFinite(r.value)) continue;
    const key = `${r.case}\u0000${r.system}\u0000${r.metric}`;
    const g = groups.get(key) ?? { r, values: [] };
    g.values.push(r.value);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ r, values }) => ({
    case: r.case,
    system: r.system,
    metric: r.metric,
    unit: r.unit,
    spread: spread(values),
  }));
}

export function median(
  s: readonly Summary[],
  kase: string,
  system: string,
  metric: string,
): number | undefined {
  return s.find((x) => x.case === kase && x.system === system && x.metric === metric)?.spread.median;
}

/** Units where less is better: the ratio then reads "ours takes x times as long". */
export const lowerIsBetter = (unit: string) =>
  unit === 'µs' || unit === 's' || unit === 's/GiB' || unit === 'MiB';

/** The figures the table leads with, in the order of the issue. */
export const HEADLINES: { case: string; metric: string; unit: string }[] = [
  { case: 'W1 batches of 100', metric: 'records/s', unit: 'records/s' },
  { case: 'W1 batches of 100', metric: 'records/s, first pass from cold', unit: 'records/s' },
  { case: 'W1 batches of 100', metric: 'MiB/s', unit: 'MiB/s' },
  { case: 'W1 batches of 100', metric: 'latency p50', unit: 'µs' },
  { case: 'W1 batches of 100', metric: 'latency p99', unit: 'µs' },
  { case: 'W1 batches of 100', metric: 'server peak RSS', unit: 'MiB' },
  { case: 'W1 batches of 10', metric: 'records/s', unit: 'records/s' },
  { case: 'W1 batches of 10', metric: 'records/s, first pass from cold', unit: 'records/s' },
  { case: 'W1 batches of 10', metric: 'latency p50', unit: 'µs' },
  { case: 'W1 batches of 10', metric: 'latency p99', unit: 'µs' },
  { case: 'W2 one record per request', metric: 'requests/s', unit: 'requests/s' },
  { case: 'W2 one record per request', metric: 'latency p50', unit: 'µs' },
  { case: 'W2 one record per request', metric: 'latency p99', unit: 'µs' },
  { case: 'W3 durable, 8 producers', metric: 'records/s', unit: 'records/s' },
  { case: 'W3 durable, 8 producers', metric: 'records per fsync', unit: 'records' },
  { case: 'W3 durable, 64 producers', metric: 'records/s', unit: 'records/s' },
  { case: 'W3 durable, 64 producers', metric: 'records per fsync', unit: 'records' },
  { case: 'W4 read from the start', metric: 'read', unit: 'MiB/s' },
  { case: 'W4 read from the start', metric: 'read, every CRC verified', unit: 'MiB/s' },
  { case: 'W5 open loop 5,000/s', metric: 'latency p50', unit: 'µs' },
  { case: 'W5 open loop 5,000/s', metric: 'latency p99', unit: 'µs' },
  { case: 'W5 open loop 5,000/s', metric: 'latency p999', unit: 'µs' },
  { case: 'W5 open loop 5,000/s', metric: 'service latency p50', unit: 'µs' },
  { case: 'W5 open loop 5,000/s', metric: 'service latency p99', unit: 'µs' },
  { case: 'W6 long poll', metric: 'wake-up p50', unit: 'µs' },
  { case: 'W6 long poll', metric: 'wake-up p99', unit: 'µs' },
  { case: 'W6 long poll', metric: 'idle requests per consumer', unit: 'requests/s' },
  { case: 'W6 long poll', metric: 'producer ack after idle p50', unit: 'µs' },
  { case: 'W7 recovery after a kill', metric: 'recovery', unit: 's/GiB' },
  { case: 'W7 recovery after a kill', metric: 'start to serving', unit: 's' },
  { case: 'W7 recovery after a kill', metric: 'start to serving, empty data directory', unit: 's' },
];

export const OURS = 'booblik';
/** The same broker with TLS required, through the same lean driver over TLS: shown beside ours. */
export const OURS_TLS = 'booblik-tls';

function cell(v: number | undefined): string {
  if (v === undefined) return '—';
  const a = Math.abs(v);
  return fmt(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

function ratio(ours: number | undefined, peer: number | undefined): string {
  if (ours === undefined || peer === undefined || peer === 0) return '—';
  const r = ours / peer;
  return `${fmt(r, r >= 10 ? 0 : r >= 1 ? 1 : 2)}x`;
}

/**
 * Markdown table of the headline medians: ours, each peer, ours/peer. When the run had booblik-tls,
 * its column and booblik-tls/booblik (what TLS costs) come right after ours.
 */
export function headlineTable(
  s: readonly Summary[],
  peers: readonly string[],
  peerNotes: Record<string, string>,
): string {
  const withTls = s.some((x) => x.system === OURS_TLS);
  const tlsHead = withTls ? [OURS_TLS, `${OURS_TLS}/${OURS}`] : [];
  const head = ['workload', 'metric', OURS, ...tlsHead, ...peers.flatMap((p) => [p, `${OURS}/${p}`])];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  for (const h of HEADLINES) {
    const ours = median(s, h.case, OURS, h.metric);
    const tls = median(s, h.case, OURS_TLS, h.metric);
    const cells = peers.map((p) => median(s, h.case, p, h.metric));
    if (ours === undefined && tls === undefined && cells.every((c) => c === undefined)) continue;
    const arrow = lowerIsBetter(h.unit) ? ' (lower is better)' : '';
    const row = [
      h.case,
      `${h.metric}, ${h.unit}${arrow}`,
      `**${cell(ours)}**`,
      ...(withTls ? [cell(tls), ratio(tls, ours)] : []),
      ...peers.flatMap((p, i) => {
        const note = peerNotes[`${h.case}/${p}`];
        return [`${cell(cells[i])}${note ? ` ${note}` : ''}`, ratio(ours, cells[i])];
      }),
    ];
    lines.push(`| ${row.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Every figure: min / median / max and the number of runs, per case and system. */
export function fullTable(s: readonly Summary[]): string {
  const lines = [
    '| workload | system | metric | unit | min | median | max | runs |',
    '|---|---|---|---|---:|---:|---:|---:|',
  ];
  for (const x of s) {
    lines.push(
      `| ${x.case} | ${x.system} | ${x.metric} | ${x.unit} | ${cell(x.spread.min)} | **${cell(x.spread.median)}** | ${cell(x.spread.max)} | ${x.spread.runs} |`,
    );
  }
  return lines.join('\n');
}

/** The floor server (node-floor.ts): what a Node server reaches with nothing of a broker's work. */
export const NODE_FLOOR = 'node-floor';
/** The floor server with TLS required: what TLS costs Node with nothing of a broker's on top. */
export const NODE_FLOOR_TLS = 'node-floor-tls';

export interface Floor {
  name: string;
  /**
   * What `system` measured, as text, and whether it meets the floor; undefined when not measured.
   * Asked for booblik, then for the floor server: a floor the floor server misses in the same run is
   * out of reach of any broker on Node's socket streams on this machine.
   */
  check(s: readonly Summary[], system: string): { measured: string; met: boolean } | undefined;
  /** A figure of booblik's alone (its client, its reads, its recovery): the floor server has none. */
  oursOnly?: boolean;
}

const both = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : ([a, b] as const);

const W2 = 'W2 one record per request';
const W5 = 'W5 open loop 5,000/s';

function atLeastTimesRedis(
  kase: string,
  metric: string,
  times: number,
  absolute?: number,
  unit = '',
): Floor['check'] {
  return (s, system) => {
    const ours = median(s, kase, system, metric);
    const redis = median(s, kase, 'redis', metric);
    if (ours === undefined) return undefined;
    const r = redis === undefined ? undefined : ours / redis;
    const okRatio = r === undefined ? false : r >= times;
    const okAbs = absolute === undefined || ours >= absolute;
    return {
      measured: `${cell(ours)} ${unit}${r === undefined ? '' : `, ${fmt(r, 2)}x Redis`}`.trim(),
      met: okRatio && okAbs,
    };
  };
}

function atMostTimesRedis(kase: string, metric: string, times: number, absolute?: number): Floor['check'] {
  return (s, system) => {
    const v = both(median(s, kase, system, metric), median(s, kase, 'redis', metric));
    if (!v) return undefined;
    const r = v[0] / v[1];
    return {
      measured: `${cell(v[0])} µs, ${fmt(r, 2)}x Redis's ${cell(v[1])}`,
      met: r <= times && (absolute === undefined || v[0] <= absolute),
    };
  };
}

function atMost(kase: string, metric: string, limit: number, unit: string): Floor['check'] {
  return (s, system) => {
    const v = median(s, kase, system, metric);
    return v === undefined ? undefined : { measured: `${cell(v)} ${unit}`, met: v <= limit };
  };
}

/**
 * With TLS against without, both through the lean load generator, same run: booblik-tls / booblik,
 * and for the floor server node-floor-tls / node-floor (what TLS costs Node itself here).
 */
function tlsAgainstPlaintext(kase: string, metric: string, times: number): Floor['check'] {
  return (s, system) => {
    const [withTls, without] = system === NODE_FLOOR ? [NODE_FLOOR_TLS, NODE_FLOOR] : [OURS_TLS, OURS];
    const v = both(median(s, kase, withTls, metric), median(s, kase, without, metric));
    return (
      v && {
        measured: `${fmt(v[0] / v[1], 2)}x plaintext (${withTls} / ${without})`,
        met: v[0] / v[1] >= times,
      }
    );
  };
}

/** The client against the lean load generator, both on booblik, same run. */
function clientAgainstLean(kase: string, metric: string, times: number): Floor['check'] {
  return (s) => {
    const v = both(median(s, kase, 'booblik-client', metric), median(s, kase, OURS, metric));
    return v && { measured: `${fmt(v[0] / v[1], 2)}x the lean load generator`, met: v[0] / v[1] >= times };
  };
}

export const FLOORS: Floor[] = [
  {
    name: 'W1 batches of 100 >= 3,000,000 records/s (issue 17)',
    check: atLeastTimesRedis('W1 batches of 100', 'records/s', 0, 3_000_000, 'records/s'),
  },
  {
    name: 'W2 >= 1.0x Redis (issue 17)',
    check: atLeastTimesRedis(W2, 'requests/s', 1, undefined, 'requests/s'),
  },
  {
    name: 'W3 FORCED, 8 producers >= 1.2x Redis appendfsync always (issue 17)',
    check: atLeastTimesRedis('W3 durable, 8 producers', 'records/s', 1.2, undefined, 'records/s'),
  },
  {
    name: 'W3 FORCED, 8 producers >= 5 records per fdatasync (issue 17)',
    oursOnly: true,
    check: (s) => {
      const v = median(s, 'W3 durable, 8 producers', OURS, 'records per fsync');
      return v === undefined ? undefined : { measured: `${cell(v)} records`, met: v >= 5 };
    },
  },
  {
    name: 'W3 FORCED, 64 producers >= 1.5x Redis (issue 17)',
    check: atLeastTimesRedis('W3 durable, 64 producers', 'records/s', 1.5, undefined, 'records/s'),
  },
  {
    name: 'W5 p99 <= 1.5x Redis p99 and <= 1 ms (issue 17)',
    check: atMostTimesRedis(W5, 'latency p99', 1.5, 1000),
  },
  { name: 'W5 p999 <= 2x Redis p999 (issue 17)', check: atMostTimesRedis(W5, 'latency p999', 2) },
  {
    name: 'W6 wake-up p50 <= Redis p50 (issue 17)',
    check: atMostTimesRedis('W6 long poll', 'wake-up p50', 1),
  },
  {
    name: 'booblik-client W1 batches of 100 >= 0.7x the lean load generator (issue 17)',
    oursOnly: true,
    check: clientAgainstLean('W1 batches of 100', 'records/s', 0.7),
  },
  {
    name: 'booblik-client W2 >= 0.9x the lean load generator (issue 17)',
    oursOnly: true,
    check: clientAgainstLean(W2, 'requests/s', 0.9),
  },
  {
    name: 'W4 >= 10x Redis XRANGE and >= 1,000 MiB/s',
    oursOnly: true,
    check: atLeastTimesRedis('W4 read from the start', 'read', 10, 1000, 'MiB/s'),
  },
  {
    name: "W4 through the client's Consumer >= 2,000,000 records/s (128 B, every CRC checked)",
    oursOnly: true,
    check: (s) => {
      const v = median(s, 'W4 read from the start', 'booblik-client', 'read records/s');
      return v === undefined ? undefined : { measured: `${cell(v)} records/s`, met: v >= 2_000_000 };
    },
  },
  {
    name: "W4 through the client's Consumer: 1 MiB fetches no slower than 64 KiB",
    oursOnly: true,
    check: (s) => {
      const v = both(
        median(s, 'W4 read from the start', 'booblik-client', 'read records/s'),
        median(s, 'W4 read from the start', 'booblik-client', 'read, 64 KiB fetches records/s'),
      );
      return v && { measured: `${cell(v[0])} vs ${cell(v[1])} records/s`, met: v[0] >= v[1] };
    },
  },
  {
    name: 'W1 batches of 100 with TLS >= 0.8x plaintext',
    check: tlsAgainstPlaintext('W1 batches of 100', 'records/s', 0.8),
  },
  {
    name: 'W4 with TLS >= 0.5x plaintext',
    check: tlsAgainstPlaintext('W4 read from the start', 'read', 0.5),
  },
  {
    name: 'W7 <= 0.3 s per GiB',
    oursOnly: true,
    check: atMost('W7 recovery after a kill', 'recovery', 0.3, 's/GiB'),
  },
  {
    name: 'W7 an empty single node serving <= 0.35 s after its spawn',
    oursOnly: true,
    check: atMost('W7 recovery after a kill', 'start to serving, empty data directory', 0.35, 's'),
  },
  {
    name: 'broker RSS under W1 <= 150 MiB (issue 4)',
    oursOnly: true,
    check: atMost('W1 batches of 100', 'server peak RSS', 150, 'MiB'),
  },
  {
    name: 'ack latency at 5,000 requests/s p50 <= 120 µs (issue 4)',
    check: atMost(W5, 'latency p50', 120, 'µs'),
  },
  {
    name: 'ack latency at 5,000 requests/s p99 <= 800 µs (issue 4)',
    check: atMost(W5, 'latency p99', 800, 'µs'),
  },
];

export function floorTable(s: readonly Summary[]): { table: string; missed: string[] } {
  const lines = [
    `| floor | booblik (medians) | met | ${NODE_FLOOR}, same run | met |`,
    '|---|---|---|---|---|',
  ];
  const missed: string[] = [];
  const shown = (r: { measured: string; met: boolean } | undefined) =>
    r ? `${r.measured} | ${r.met ? 'yes' : '**no**'}` : 'not measured | —';
  for (const f of FLOORS) {
    const r = f.check(s, OURS);
    if (r && !r.met) missed.push(f.name);
    lines.push(`| ${f.name} | ${shown(r)} | ${f.oursOnly ? '— | —' : shown(f.check(s, NODE_FLOOR))} |`);
  }
  return { table: lines.join('\n'), missed };
}

// ---------------------------------------------------------------------------------------------- chart

const COLORS: Record<string, string> = {
  booblik: '#d9480f',
  'booblik-client': '#f08c00',
  'booblik-tls': '#862e9c',
  redis: '#1c7ed6',
  nats: '#2f9e44',
  'node-floor': '#868e96',
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One small panel per headline figure, a bar per system, each panel on its own linear scale. */
export function chartSvg(
  s: readonly Summary[],
  systems: readonly string[],
  title: string,
  notes: Record<string, string> = {},
): string {
  const panels = HEADLINES.filter((h) => !['MiB/s', 'records'].includes(h.unit) || h.metric === 'read')
    .filter(
      (h) =>
        !/service|p999|idle|server peak|start to|from cold/.test(h.metric) || h.metric === 'server peak RSS',
    )
    .map((h) => ({ h, values: systems.map((sys) => median(s, h.case, sys, h.metric)) }))
    .filter((p) => p.values.some((v) => v !== undefined));
  const cols = 4;
  const pw = 250;
  const ph = 190;
  const top = 64;
  const width = cols * pw + 20;
  const height = top + Math.ceil(panels.length / cols) * ph + 10;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<title>${esc(title)}</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  systems.forEach((sys, i) => {
    const x = 10 + i * 140;
    out.push(`<rect x="${x}" y="34" width="12" height="12" fill="${COLORS[sys] ?? '#868e96'}"/>`);
    out.push(`<text x="${x + 17}" y="44">${esc(sys)}</text>`);
  });
  out.push(
    `<text x="${10 + systems.length * 140}" y="44" fill="#495057">medians; each panel on its own scale</text>`,
  );
  panels.forEach((p, k) => {
    const x0 = 10 + (k % cols) * pw;
    const y0 = top + Math.floor(k / cols) * ph;
    const max = Math.max(...p.values.map((v) => v ?? 0)) || 1;
    const lower = lowerIsBetter(p.h.unit);
    out.push(`<text x="${x0 + 4}" y="${y0 + 12}" font-weight="bold">${esc(p.h.case)}</text>`);
    out.push(
      `<text x="${x0 + 4}" y="${y0 + 26}" fill="#495057">${esc(`${p.h.metric}, ${p.h.unit}${lower ? ' (lower is better)' : ''}`)}</text>`,
    );
    const chartTop = y0 + 48;
    const chartH = ph - 80;
    const bw = Math.min(48, (pw - 30) / systems.length - 10);
    out.push(
      `<line x1="${x0 + 4}" y1="${chartTop + chartH}" x2="${x0 + pw - 14}" y2="${chartTop + chartH}" stroke="#adb5bd"/>`,
    );
    p.values.forEach((v, i) => {
      const bx = x0 + 10 + i * (bw + 10);
      if (v === undefined) {
        // The TypeScript client runs only where it tells something (W1, W2, W4): no label elsewhere.
        if (systems[i] === 'booblik-client') return;
        out.push(
          `<text x="${bx + bw / 2}" y="${chartTop + chartH - 4}" text-anchor="middle" fill="#adb5bd">n/a</text>`,
        );
        return;
      }
      const h = Math.max(1, (v / max) * chartH);
      out.push(
        `<rect x="${bx}" y="${chartTop + chartH - h}" width="${bw}" height="${h}" fill="${COLORS[systems[i]!] ?? '#868e96'}"/>`,
      );
      out.push(
        `<text x="${bx + bw / 2}" y="${chartTop + chartH - h - 3}" text-anchor="middle">${esc(cell(v))}</text>`,
      );
      const note = notes[`${p.h.case}/${systems[i]}`];
      if (note) {
        out.push(
          `<text x="${bx + bw / 2}" y="${chartTop + chartH + 12}" text-anchor="middle" fill="#c92a2a">${esc(note)}</text>`,
        );
      }
    });
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
