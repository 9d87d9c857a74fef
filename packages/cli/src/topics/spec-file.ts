/**
 * The topic files `booblik topics apply -f` reads, in the style of gazctl's: a tree of YAML nodes where
 * children inherit every field of their parent (labels merge, a child's value winning), and the leaves
 * are topics. A file holding one spec (`name`, `partitions`, `labels`) is a tree of one leaf.
 *
 *   labels: {team: payments}       # inherited by every child
 *   partitions: 3
 *   children:
 *     - name: orders               # a leaf: a topic
 *       revision: 12               # optional, leaves only: the revision expected (else any)
 *     - name: refunds
 *       partitions: 6
 *     - name: old-orders
 *       delete: true               # a leaf that deletes its topic
 */

import type { TopicChangeInput, TopicSpec, TopicSpecInput } from '@booblik/client';
import { parseDocument, stringify } from 'yaml';
import { UsageError } from '../errors.js';

/** A file that does not describe topics; the message names the file, the node and the field. */
export class SpecFileError extends UsageError {
  override name = 'SpecFileError';
}

const specFields = [
  'partitions',
  'labels',
  'retentionBytes',
  'retentionMs',
  'segmentBytes',
  'readOnly',
  'replication',
  'storeUrl',
  'store',
] as const;
const leafFields = ['name', 'revision', 'delete'] as const;
const groupFields = ['children'] as const;
const knownFields = new Set<string>([...specFields, ...leafFields, ...groupFields]);

type Inherited = Partial<Omit<TopicSpecInput, 'name' | 'revision'>>;

/** A leaf of the file as a change, with where it came from (`children[1]`) for messages. */
export interface FileChange {
  change: TopicChangeInput;
  /** The revision the leaf names, or undefined (any). */
  revision: number | undefined;
  where: string;
}

/** Reads a topic file into changes, in file order. */
export function parseSpecFile(text: string, file: string): FileChange[] {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) throw new SpecFileError(`${file}: ${doc.errors[0]!.message}`);
  const root: unknown = doc.toJS();
  if (root === null || root === undefined) throw new SpecFileError(`${file}: empty, expected a topic spec`);
  const out: FileChange[] = [];
  const names = new Set<string>();
  walk(root, {}, '', file, out);
  for (const c of out) {
    const name = c.change.op === 'upsert' ? c.change.spec.name : c.change.name;
    if (names.has(name)) throw new SpecFileError(`${file}: ${c.where}: topic ${name} appears twice`);
    names.add(name);
  }
  return out;
}

function walk(node: unknown, inherited: Inherited, where: string, file: string, out: FileChange[]): void {
  const at = where === '' ? 'the top level' : where;
  const fail = (message: string): never => {
    throw new SpecFileError(`${file}: ${at}: ${message}`);
  };
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    fail('expected a mapping of topic fields');
  }
  const fields = node as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!knownFields.has(key)) {
      fail(`unknown field "${key}", expected one of ${[...knownFields].join(', ')}`);
    }
  }
  const own = readSpecFields(fields, fail);
  const merged: Inherited = { ...inherited, ...own };
  if (inherited.labels !== undefined || own.labels !== undefined) {
    merged.labels = { ...(inherited.labels ?? {}), ...(own.labels ?? {}) };
  }
  if (fields.children !== undefined) {
    if (!Array.isArray(fields.children)) fail('children: expected a list of nodes');
    for (const key of leafFields) {
      if (fields[key] !== undefined) fail(`${key}: only a leaf (a node without children) may set it`);
    }
    const children = fields.children as unknown[];
    if (children.length === 0) fail('children: empty, expected at least one node');
    for (const [i, child] of children.entries()) {
      walk(child, merged, `${where === '' ? '' : `${where}.`}children[${i}]`, file, out);
    }
    return;
  }
  if (typeof fields.name !== 'string' || fields.name === '') fail('name: expected the topic name');
  const name = fields.name as string;
  const revision = fields.revision;
  if (revision !== undefined && !(Number.isSafeInteger(revision) && (revision as number) >= -1)) {
    fail(`revision: ${String(revision)}, expected -1 (any), 0 (must not exist) or a revision`);
  }
  if (fields.delete !== undefined && typeof fields.delete !== 'boolean')
    fail('delete: expected true or false');
  const rev = revision as number | undefined;
  if (fields.delete === true) {
    out.push({ change: { op: 'delete', name, expectedRevision: rev ?? -1 }, revision: rev, where: at });
    return;
  }
  if (merged.partitions === undefined) fail(`partitions: not set for topic ${name} (nor by a parent)`);
  const spec: TopicSpecInput = { ...merged, name, partitions: merged.partitions!, revision: rev ?? -1 };
  out.push({ change: { op: 'upsert', spec }, revision: rev, where: at });
}

function readSpecFields(fields: Record<string, unknown>, fail: (m: string) => never): Inherited {
  const own: Inherited = {};
  const int = (key: (typeof specFields)[number]): number | undefined => {
    const v = fields[key];
    if (v === undefined) return undefined;
    if (!Number.isSafeInteger(v)) fail(`${key}: ${JSON.stringify(v)}, expected an integer`);
    return v as number;
  };
  const set = <K extends keyof Inherited>(key: K, value: Inherited[K] | undefined) => {
    if (value !== undefined) own[key] = value;
  };
  set('partitions', int('partitions'));
  set('retentionBytes', int('retentionBytes'));
  set('retentionMs', int('retentionMs'));
  set('segmentBytes', int('segmentBytes'));
  set('replication', int('replication'));
  if (fields.readOnly !== undefined) {
    if (typeof fields.readOnly !== 'boolean') fail('readOnly: expected true or false');
    own.readOnly = fields.readOnly as boolean;
  }
  // `store:` is the short name the operations guide uses; one of the two, not both.
  if (fields.store !== undefined && fields.storeUrl !== undefined)
    fail('store and storeUrl: give one of them');
  for (const key of ['storeUrl', 'store'] as const) {
    if (fields[key] === undefined) continue;
    if (typeof fields[key] !== 'string')
      fail(`${key}: expected a string (file:///path or s3://bucket/prefix)`);
    own.storeUrl = fields[key] as string;
  }
  if (fields.labels !== undefined) {
    const labels = fields.labels;
    if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
      fail('labels: expected a mapping of key: value');
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
      // `team: 7` reads as a number in YAML; a label value is its text.
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
        fail(`labels.${k}: expected a string`);
      }
      out[k] = String(v);
    }
    own.labels = out;
  }
  return own;
}

/** A spec as the file shape (and `list --format json|yaml`): defaults left out, read-only as a flag. */
export function specToFields(spec: TopicSpec): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    name: spec.name,
    partitions: spec.partitions,
    labels: { ...spec.labels },
    revision: spec.revision,
  };
  if (spec.retentionBytes !== -2) fields.retentionBytes = spec.retentionBytes;
  if (spec.retentionMs !== -2) fields.retentionMs = spec.retentionMs;
  if (spec.segmentBytes !== 0) fields.segmentBytes = spec.segmentBytes;
  if ((spec.flags & 1) !== 0) fields.readOnly = true;
  if (spec.replication !== 0) fields.replication = spec.replication;
  if (spec.storeUrl !== '') fields.storeUrl = spec.storeUrl;
  return fields;
}

/** One spec as a file of one leaf (what `topics edit` opens). */
export function specFileOf(spec: TopicSpec): string {
  return stringify(specToFields(spec));
}

/** Specs as one file: a group whose children are the topics, applicable as it is. */
export function specsFileOf(specs: readonly TopicSpec[]): string {
  return stringify({ children: specs.map(specToFields) });
}
