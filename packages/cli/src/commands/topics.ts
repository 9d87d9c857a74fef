/**
 * booblik topics list|apply|edit|delete|watch: topics on a running broker, in the style of
 * `gazctl journals` and kubectl.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  BrokerError,
  type Connection,
  type ListedTopic,
  RevisionMismatchError,
  type TopicSpec,
} from '@booblik/client';
import { ErrorCode } from '@booblik/protocol';
import { type Args, brokerAddresses, parse } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { BrokerTooOldError, TopicNotFoundError, UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { formatTable } from '../table.js';
import { tlsOption } from '../tls.js';
import { planChanges } from '../topics/describe.js';
import { parseSpecFile, SpecFileError, specFileOf, specsFileOf, specToFields } from '../topics/spec-file.js';

const formats = ['table', 'json', 'yaml'] as const;
type Format = (typeof formats)[number];

const subcommands: Record<string, (parsed: Args, io: Io, out: Output) => Promise<number>> = {
  list,
  apply,
  edit,
  delete: remove,
  watch,
};

export async function topicsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {
    selector: { type: 'string', short: 'l' },
    format: { type: 'string', short: 'o' },
    file: { type: 'string', short: 'f' },
    'dry-run': { type: 'boolean' },
    'purge-store': { type: 'boolean' },
  });
  const out = new Output(io.stdout);
  const [sub] = parsed.positionals;
  if (parsed.flag('help')) {
    await out.write(helpFor('topics'));
    return ExitCode.OK;
  }
  if (sub === undefined) throw new UsageError('topics: expected list, apply, edit, delete or watch');
  const run = subcommands[sub];
  if (!run)
    throw new UsageError(`topics: unknown subcommand "${sub}", expected list, apply, edit, delete or watch`);
  return run(parsed, io, out);
}

function formatOf(parsed: Args, allowed: readonly Format[] = formats): Format {
  const format = parsed.string('format') ?? 'table';
  if (!(allowed as readonly string[]).includes(format)) {
    throw new UsageError(`--format: ${format}, expected ${allowed.join(', ')}`);
  }
  return format as Format;
}

async function connect(parsed: Args, io: Io): Promise<Connection> {
  return connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
    ...tlsOption(parsed, io.env),
  });
}

async function withConnection<T>(parsed: Args, io: Io, work: (c: Connection) => Promise<T>): Promise<T> {
  const connection = await connect(parsed, io);
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}

/** The listing in each format: json is one array whose elements have name, partitions, labels, revision. */
function render(topics: readonly ListedTopic[], format: Format): string {
  const specs = topics.map((t) => t.spec);
  if (format === 'json') return `${JSON.stringify(specs.map(specToFields))}\n`;
  if (format === 'yaml') return specs.length === 0 ? 'children: []\n' : specsFileOf(specs);
  const rows = [['NAME', 'PARTITIONS', 'REVISION', 'LABELS', 'FLAGS']];
  for (const s of specs) {
    const labels = Object.entries(s.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    rows.push([
      s.name,
      String(s.partitions),
      String(s.revision),
      labels || '-',
      (s.flags & 1) !== 0 ? 'read-only' : '-',
    ]);
  }
  return formatTable(rows);
}

/** booblik topics list [-l selector] [--format table|json|yaml] */
async function list(parsed: Args, io: Io, out: Output): Promise<number> {
  const format = formatOf(parsed);
  const listing = await withConnection(parsed, io, (c) => c.listTopics(parsed.string('selector') ?? ''));
  await out.write(render(listing.topics, format));
  return ExitCode.OK;
}

async function readInput(file: string, io: Io): Promise<string> {
  if (file !== '-') return fs.readFile(file, 'utf8');
  let text = '';
  for await (const chunk of io.stdin) text += chunk.toString();
  return text;
}

/** booblik topics apply -f FILE.yaml [--dry-run] */
async function apply(parsed: Args, io: Io, out: Output): Promise<number> {
  const file = parsed.string('file');
  if (file === undefined) throw new UsageError('topics apply: -f FILE is required (- for stdin)');
  const changes = parseSpecFile(await readInput(file, io), file === '-' ? 'stdin' : file);
  const dryRun = parsed.flag('dry-run');
  return withConnection(parsed, io, async (c) => {
    const current = new Map((await c.listTopics()).topics.map((t) => [t.spec.name, t.spec]));
    const planned = planChanges(changes, current);
    for (const p of planned) await out.write(`${p.line}\n`);
    const sent = planned.filter((p) => p.effective).map((p) => p.file.change);
    if (sent.length === 0) {
      await out.write('nothing to apply\n');
      return ExitCode.OK;
    }
    const { revision } = await c.applyTopics(sent, { dryRun });
    await out.write(
      dryRun
        ? `dry run: the broker accepts ${sent.length} change(s); nothing changed (revision ${revision})\n`
        : `applied ${sent.length} change(s): revision ${revision}\n`,
    );
    return ExitCode.OK;
  });
}

/** booblik topics edit NAME: the spec in $EDITOR (with its revision), applied on save. */
async function edit(parsed: Args, io: Io, out: Output): Promise<number> {
  const [, name, ...extra] = parsed.positionals;
  if (name === undefined || extra.length > 0) throw new UsageError('topics edit: expected one topic name');
  return withConnection(parsed, io, async (c) => {
    const spec = await findTopic(c, name);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'booblik-edit-'));
    const file = path.join(dir, `${name}.yaml`);
    const before = `# Edit the spec of topic ${name}; saving applies it if the topic is still at this revision.\n${specFileOf(spec)}`;
    await fs.writeFile(file, before);
    await runEditor(file, io);
    const after = await fs.readFile(file, 'utf8');
    if (after === before) {
      await fs.rm(dir, { recursive: true, force: true });
      await out.write(`edit of ${name} cancelled: nothing changed\n`);
      return ExitCode.OK;
    }
    let changes: ReturnType<typeof parseSpecFile>;
    try {
      changes = parseSpecFile(after, file);
      if (
        changes.length !== 1 ||
        changes[0]!.change.op !== 'upsert' ||
        changes[0]!.change.spec.name !== name
      ) {
        throw new SpecFileError(
          `${file}: expected the spec of topic ${name} alone (to rename, create and delete)`,
        );
      }
    } catch (error) {
      io.stderr.write(`booblik: your edit is kept in ${file}\n`);
      throw error;
    }
    const change = changes[0]!.change;
    // The revision shown is the one expected: a change made meanwhile is refused, not overwritten.
    if (change.op === 'upsert' && changes[0]!.revision === undefined) change.spec.revision = spec.revision;
    let revision: number;
    try {
      ({ revision } = await c.applyTopics([change]));
    } catch (error) {
      // Whatever went wrong, the user's work is not thrown away with the temporary directory.
      io.stderr.write(`booblik: ${keptEditNote(error, name, file)}\n`);
      throw error;
    }
    await fs.rm(dir, { recursive: true, force: true });
    await out.write(`updated ${name}: revision ${revision}\n`);
    return ExitCode.OK;
  });
}

/** Where a refused edit is, and for a stale revision how to apply it over the spec as it is now. */
function keptEditNote(error: unknown, name: string, file: string): string {
  if (!(error instanceof RevisionMismatchError)) return `your edit is kept in ${file}`;
  return (
    `topic ${name} changed while you edited it (revision ${error.expectedRevision}, now ${error.actualRevision}): ` +
    `your edit is kept in ${file}; to apply it over the current spec, set its revision to ` +
    `${error.actualRevision} and run: booblik topics apply -f ${file}`
  );
}

async function findTopic(c: Connection, name: string): Promise<TopicSpec> {
  const found = (await c.listTopics(`name=${name}`)).topics[0];
  if (!found) throw new TopicNotFoundError([name]);
  return found.spec;
}

function runEditor(file: string, io: Io): Promise<void> {
  const editor = io.env.VISUAL || io.env.EDITOR || 'vi';
  return new Promise((resolve, reject) => {
    // Through a shell, as git does: EDITOR may carry arguments (`code --wait`).
    const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'editor', file], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`the editor (${editor}) exited with ${code}; nothing applied, the file is ${file}`),
          ),
    );
  });
}

/**
 * booblik topics delete NAME... [--purge-store] [--dry-run]: all of them or none, each at the
 * revision it is seen at. A topic's objects in its fragment store stay unless --purge-store asks
 * for them to go too (APPLY v2). With --dry-run the broker checks the deletions and changes nothing.
 */
async function remove(parsed: Args, io: Io, out: Output): Promise<number> {
  const names = parsed.positionals.slice(1);
  if (names.length === 0) throw new UsageError('topics delete: expected at least one topic name');
  const dryRun = parsed.flag('dry-run');
  const purgeStore = parsed.flag('purge-store');
  return withConnection(parsed, io, async (c) => {
    const current = new Map((await c.listTopics()).topics.map((t) => [t.spec.name, t.spec]));
    const missing = names.filter((n) => !current.has(n));
    if (missing.length > 0) throw new TopicNotFoundError(missing);
    let revision: number;
    try {
      ({ revision } = await c.applyTopics(
        names.map((name) => ({
          op: 'delete' as const,
          name,
          expectedRevision: current.get(name)!.revision,
          ...(purgeStore ? { purgeStore } : {}),
        })),
        { dryRun },
      ));
    } catch (error) {
      if (purgeStore && error instanceof BrokerError && error.code === ErrorCode.UNSUPPORTED_VERSION) {
        throw new BrokerTooOldError(
          `the broker has no APPLY v2, which --purge-store needs; nothing was deleted`,
          { cause: error },
        );
      }
      throw error;
    }
    for (const name of names) {
      const store = current.get(name)!.storeUrl;
      const what =
        store === ''
          ? ''
          : purgeStore
            ? ` and its history in store ${store}`
            : ` (its objects stay in store ${store}, and a topic created again under the name there continues that history; --purge-store removes them)`;
      await out.write(`${dryRun ? 'would delete' : 'deleted'} ${name}${what}\n`);
    }
    await out.write(
      dryRun
        ? `dry run: the broker accepts ${names.length} deletion(s); nothing changed (revision ${revision})\n`
        : `revision ${revision}\n`,
    );
    return ExitCode.OK;
  });
}

/** booblik topics watch [-l selector] [--format table|json]: the listing, then again whenever it changes. */
async function watch(parsed: Args, io: Io, out: Output): Promise<number> {
  const format = formatOf(parsed, ['table', 'json']);
  return withConnection(parsed, io, async (c) => {
    // The broker answers a watch on every change of the spec store, matching or not: print only
    // when the matching topics themselves changed.
    let shown: string | undefined;
    for await (const listing of c.watchTopics(parsed.string('selector') ?? '', { signal: io.signal })) {
      const matching = JSON.stringify(listing.topics.map((t) => specToFields(t.spec)));
      if (matching === shown) continue;
      shown = matching;
      const text =
        format === 'json'
          ? `${JSON.stringify({ revision: listing.revision, topics: listing.topics.map((t) => specToFields(t.spec)) })}\n`
          : `revision ${listing.revision}\n${render(listing.topics, 'table')}`;
      if (!(await out.write(text))) break;
    }
    return ExitCode.OK;
  });
}
