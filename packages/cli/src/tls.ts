/**
 * The TLS flags every command that connects takes: --tls (Node's default CAs), --tls.ca FILE (else
 * BOOBLIK_TLS_CA), --tls.cert FILE with --tls.key FILE (a client certificate). Any of them turns TLS
 * on. Files are read here, so a wrong path is a usage error naming the flag.
 */
import fs from 'node:fs';
import type { TlsOptions } from '@booblik/client';
import { TLS_CA_ENV } from './constants.js';
import { UsageError } from './errors.js';
import type { Args, Flags } from './parsed-args.js';

export const tlsFlags: Flags = {
  tls: { type: 'boolean' },
  'tls.ca': { type: 'string' },
  'tls.cert': { type: 'string' },
  'tls.key': { type: 'string' },
};

function readPem(source: string, file: string): Buffer {
  if (file === '') throw new UsageError(`${source}: expected a PEM file`);
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new UsageError(
      `${source}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** The `tls` connect option the flags ask for: nothing when none is given. */
export function tlsOption(
  parsed: Args,
  env: Record<string, string | undefined>,
): { tls?: true | TlsOptions } {
  const caFlag = parsed.string('tls.ca');
  const envCa = env[TLS_CA_ENV] || undefined;
  const ca = caFlag ?? envCa;
  const cert = parsed.string('tls.cert');
  const key = parsed.string('tls.key');
  if ((cert === undefined) !== (key === undefined)) {
    throw new UsageError(cert === undefined ? '--tls.key needs --tls.cert' : '--tls.cert needs --tls.key');
  }
  if (!parsed.flag('tls') && ca === undefined && cert === undefined) return {};
  const options: TlsOptions = {};
  if (ca !== undefined) options.ca = readPem(caFlag !== undefined ? '--tls.ca' : TLS_CA_ENV, ca);
  if (cert !== undefined && key !== undefined) {
    options.cert = readPem('--tls.cert', cert);
    options.key = readPem('--tls.key', key);
  }
  return { tls: Object.keys(options).length === 0 ? true : options };
}
