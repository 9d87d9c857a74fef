/**
 * Test certificates made with the `openssl` command (execFile, no shell) into a temp dir: a CA, a
 * server certificate for 127.0.0.1 and localhost, the wrong ones (expired, another name, signed by
 * another CA), and client certificates. EC P-256 keys: each file takes milliseconds to make.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from './temp-dir.js';

const run = promisify(execFile);

/** A certificate and its key, as PEM file paths. */
export interface CertificatePair {
  cert: string;
  key: string;
}

export interface IssueOptions {
  /** The subject CN (a client certificate's CN is its principal). */
  cn: string;
  /** subjectAltName entries, `IP:127.0.0.1` or `DNS:localhost`; none for a client certificate. */
  altNames?: readonly string[];
  /** Signed by the other CA (one the broker and the clients do not trust). */
  otherCa?: boolean;
  /** Valid until this many days from now; -1: already expired. */
  days?: number;
  /** For a client certificate (extendedKeyUsage clientAuth instead of serverAuth). */
  client?: boolean;
}

export interface TestCertificates {
  dir: string;
  /** The CA everything trusted is signed by (PEM path). */
  ca: string;
  /** A CA nobody trusts (PEM path). */
  otherCa: string;
  /** For 127.0.0.1 and localhost, signed by `ca`. */
  server: CertificatePair;
  /** For 127.0.0.1 and localhost, expired. */
  expired: CertificatePair;
  /** For another host only (`elsewhere.example`). */
  wrongName: CertificatePair;
  /** For 127.0.0.1 and localhost, signed by `otherCa`. */
  foreign: CertificatePair;
  /** A client certificate with CN `alice`, signed by `ca`. */
  client: CertificatePair;
  /** A client certificate with CN `mallory`, signed by `otherCa`. */
  foreignClient: CertificatePair;
  /** Makes another certificate in the same dir (a replacement for a reload test). */
  issue(name: string, options: IssueOptions): Promise<CertificatePair>;
}

const LOCAL_NAMES = ['IP:127.0.0.1', 'DNS:localhost'];

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('the openssl command is needed to make test certificates');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr ?? e.message}`, { cause: error });
  }
}

async function makeCa(dir: string, name: string, cn: string): Promise<CertificatePair> {
  const pair = { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    pair.key,
    '-out',
    pair.cert,
    '-days',
    '30',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return pair;
}

/** A CA, the usual wrong certificates and two client certificates; removed when the test ends. */
export async function makeCertificates(t: Pick<TestContext, 'after'>): Promise<TestCertificates> {
  const dir = tempDir(t, 'certs');
  const ca = await makeCa(dir, 'ca', 'booblik test CA');
  const other = await makeCa(dir, 'other-ca', 'booblik other CA');
  let serial = 1;
  const issue = async (name: string, o: IssueOptions): Promise<CertificatePair> => {
    const pair = { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
    const csr = path.join(dir, `${name}.csr`);
    const ext = path.join(dir, `${name}.ext`);
    const lines = ['basicConstraints=CA:FALSE', `extendedKeyUsage=${o.client ? 'clientAuth' : 'serverAuth'}`];
    if (o.altNames?.length) lines.push(`subjectAltName=${o.altNames.join(',')}`);
    fs.writeFileSync(ext, `${lines.join('\n')}\n`);
    await openssl([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      pair.key,
      '-out',
      csr,
      '-subj',
      `/CN=${o.cn}`,
    ]);
    const signer = o.otherCa ? other : ca;
    const sign = [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      signer.cert,
      '-CAkey',
      signer.key,
      '-set_serial',
      String(serial++),
      '-extfile',
      ext,
      '-out',
      pair.cert,
    ];
    const days = o.days ?? 30;
    if (days >= 0) await openssl([...sign, '-days', String(days)]);
    else {
      // Ends before it starts: expired from the first moment. OpenSSL 3.4+ refuses a negative -days
      // but takes explicit dates instead.
      await openssl([...sign, '-days', '-1']).catch(() =>
        openssl([...sign, '-not_before', '20200101000000Z', '-not_after', '20200102000000Z']),
      );
    }
    return pair;
  };
  return {
    dir,
    ca: ca.cert,
    otherCa: other.cert,
    server: await issue('server', { cn: 'booblik test server', altNames: LOCAL_NAMES }),
    expired: await issue('expired', { cn: 'booblik expired', altNames: LOCAL_NAMES, days: -1 }),
    wrongName: await issue('wrong-name', { cn: 'elsewhere', altNames: ['DNS:elsewhere.example'] }),
    foreign: await issue('foreign', { cn: 'booblik foreign', altNames: LOCAL_NAMES, otherCa: true }),
    client: await issue('client', { cn: 'alice', client: true }),
    foreignClient: await issue('foreign-client', { cn: 'mallory', client: true, otherCa: true }),
    issue,
  };
}
