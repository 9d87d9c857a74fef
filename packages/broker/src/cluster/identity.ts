import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { mkdirDurable, replaceFileDurably } from '@booblik/log';
import { DataDirForeignError } from '../errors.js';

/** `<data dir>/cluster.json`: which cluster and broker id the data directory belongs to. */
export const IDENTITY_FILE = 'cluster.json';

interface IdentityFile {
  cluster: string;
  broker: string;
}

/** What `cluster.json` says, or null when the directory has none (a new or a single-node one). */
export function readIdentity(dataDir: string): IdentityFile | null {
  const file = path.join(dataDir, IDENTITY_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<IdentityFile>;
  if (typeof parsed.cluster !== 'string' || typeof parsed.broker !== 'string') {
    throw new DataDirForeignError(
      `${file}: expected {"cluster": ..., "broker": ...}, found ${text.slice(0, 100)}`,
    );
  }
  return { cluster: parsed.cluster, broker: parsed.broker };
}

/** Refuses a single node on a cluster broker's data directory (its specs live in etcd, not here). */
export function checkSingleNode(dataDir: string): void {
  const identity = readIdentity(dataDir);
  if (identity !== null) {
    throw new DataDirForeignError(
      `data directory ${path.resolve(dataDir)} belongs to broker ${identity.broker} of cluster ${identity.cluster} (${IDENTITY_FILE}); start it with booblik.cluster.etcd, or use another directory`,
    );
  }
}

/**
 * The broker id for this data directory: the kept one (refusing a configured id or cluster that
 * differs), else the configured one, else a new one; kept durably before it is used.
 */
export function establishIdentity(dataDir: string, cluster: string, configuredId: string): string {
  const kept = readIdentity(dataDir);
  const where = path.resolve(dataDir);
  if (kept !== null) {
    if (kept.cluster !== cluster) {
      throw new DataDirForeignError(
        `data directory ${where} belongs to cluster ${kept.cluster}, not ${cluster} (booblik.cluster.name); use another directory`,
      );
    }
    if (configuredId !== '' && configuredId !== kept.broker) {
      throw new DataDirForeignError(
        `data directory ${where} belongs to broker ${kept.broker}, not ${configuredId} (booblik.broker.id); use another directory, or that id`,
      );
    }
    return kept.broker;
  }
  const id = configuredId !== '' ? configuredId : `b-${randomBytes(4).toString('hex')}`;
  // A new data directory's own name must be durable before the identity in it is.
  mkdirDurable(where);
  replaceFileDurably(path.join(where, IDENTITY_FILE), `${JSON.stringify({ cluster, broker: id })}\n`);
  return id;
}
