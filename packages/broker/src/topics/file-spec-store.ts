import fs from 'node:fs/promises';
import path from 'node:path';
import { mkdirDurable } from '@booblik/log';
import { type TopicSpec, topicSpecProblem } from '@booblik/protocol';
import { SpecStoreConflictError, SpecStoreCorruptError } from '../errors.js';
import type { SpecStore, SpecStoreState } from './spec-store.js';

/** The file in the data directory that holds every topic spec. */
export const SPEC_FILE_NAME = 'topics.json';
/** Bumped if the file's shape ever changes, so an older broker refuses a newer file instead of misreading it. */
const FORMAT = 1;

interface SpecFile {
  format: number;
  revision: number;
  topics: TopicSpec[];
}

/**
 * The spec store of one node: `<dataDir>/topics.json`, replaced atomically (write a temporary file,
 * fsync it, rename it over the old one, fsync the directory), so a crash at any moment leaves the
 * old set or the new one, never a torn one. One broker owns the directory, so the revision compare
 * is done in memory.
 */
export class FileSpecStore implements SpecStore {
  readonly file: string;
  private readonly temp: string;
  private revision: number | null = null;

  constructor(readonly dataDir: string) {
    this.file = path.join(dataDir, SPEC_FILE_NAME);
    this.temp = `${this.file}.tmp`;
  }

  async load(): Promise<SpecStoreState | null> {
    // A temporary file is a replace that did not finish: the rename never happened, the old file stands.
    await fs.rm(this.temp, { force: true });
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.revision = 0;
      return null;
    }
    const state = parseSpecFile(text, this.file);
    this.revision = state.revision;
    return state;
  }

  async replace(expectedRevision: number, next: SpecStoreState): Promise<void> {
    if (this.revision === null) await this.load();
    if (this.revision !== expectedRevision) {
      throw new SpecStoreConflictError(
        `spec store at revision ${this.revision}, expected ${expectedRevision}`,
      );
    }
    const body: SpecFile = { format: FORMAT, revision: next.revision, topics: next.specs };
    // The data directory may be new: its name must be durable before the file in it is.
    mkdirDurable(this.dataDir);
    const handle = await fs.open(this.temp, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(body)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(this.temp, this.file);
    const dir = await fs.open(this.dataDir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.revision = next.revision;
  }
}

/** Reads and checks the file: every spec must pass the rules APPLY checks (defaults stay as applied). */
export function parseSpecFile(text: string, where: string): SpecStoreState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SpecStoreCorruptError(`${where}: not JSON (${(error as Error).message})`);
  }
  const f = parsed as Partial<SpecFile>;
  if (typeof f !== 'object' || f === null || f.format !== FORMAT) {
    throw new SpecStoreCorruptError(`${where}: format ${String(f?.format)}, expected ${FORMAT}`);
  }
  if (!Number.isSafeInteger(f.revision) || f.revision! < 0 || !Array.isArray(f.topics)) {
    throw new SpecStoreCorruptError(`${where}: expected a revision >= 0 and a list of topics`);
  }
  const names = new Set<string>();
  for (const [i, spec] of f.topics.entries()) {
    const problem = hasSpecShape(spec) ? topicSpecProblem(spec) : 'not a spec';
    if (problem !== null) throw new SpecStoreCorruptError(`${where}: topics[${i}]: ${problem}`);
    if (names.has(spec.name)) throw new SpecStoreCorruptError(`${where}: topic ${spec.name} twice`);
    if (spec.revision < 1 || spec.revision > f.revision!) {
      throw new SpecStoreCorruptError(
        `${where}: topics[${i}].revision ${spec.revision}, expected 1..${f.revision}`,
      );
    }
    names.add(spec.name);
  }
  return { revision: f.revision!, specs: f.topics };
}

const numberFields = [
  'partitions',
  'retentionBytes',
  'retentionMs',
  'segmentBytes',
  'flags',
  'replication',
  'revision',
];

function hasSpecShape(spec: unknown): spec is TopicSpec {
  if (typeof spec !== 'object' || spec === null) return false;
  const s = spec as Record<string, unknown>;
  if (typeof s.name !== 'string' || typeof s.storeUrl !== 'string') return false;
  if (typeof s.labels !== 'object' || s.labels === null || Array.isArray(s.labels)) return false;
  return numberFields.every((k) => typeof s[k] === 'number');
}
