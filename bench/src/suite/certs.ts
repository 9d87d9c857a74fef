/**
 * The certificates a TLS run needs, made at its start with the `openssl` command (execFile, no
 * shell) into the run's data directory: a CA and a server certificate for 127.0.0.1 and localhost,
 * EC P-256 (each takes milliseconds). The bench has its own maker: it does not depend on the
 * test kit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface BenchCertificates {
  /** The CA the clients trust (PEM path). */
  ca: string;
  /** The broker's certificate and key (PEM paths). */
  cert: string;
  key: string;
}

/** Days the certificates are valid: made afresh per run; over 14 so the broker logs no expiry warning. */
const VALID_DAYS = '30';

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') {
      throw new Error('the openssl command is needed to make the TLS benchmark certificates');
    }
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() ?? e.message}`, {
      cause: error,
    });
  }
}

const P256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A CA and a server certificate for 127.0.0.1 and localhost, in `dir` (made if missing). */
export function makeBenchCertificates(dir: string): BenchCertificates {
  fs.mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const caKey = file('ca.key');
  const out: BenchCertificates = { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
  openssl([
    'req',
    '-x509',
    ...P256,
    '-keyout',
    caKey,
    '-out',
    out.ca,
    '-days',
    VALID_DAYS,
    '-subj',
    '/CN=booblik bench CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const csr = file('server.csr');
  const ext = file('server.ext');
  fs.writeFileSync(
    ext,
    'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
  );
  openssl(['req', ...P256, '-keyout', out.key, '-out', csr, '-subj', '/CN=booblik bench broker']);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    out.ca,
    '-CAkey',
    caKey,
    '-set_serial',
    '1',
    '-days',
    VALID_DAYS,
    '-extfile',
    ext,
    '-out',
    out.cert,
  ]);
  return out;
}

/** The suite's certificates under `dataRoot`/tls; without them the run cannot measure TLS: exit 2. */
export function benchCertificatesOrExit(dataRoot: string, log: (s: string) => void): BenchCertificates {
  try {
    return makeBenchCertificates(path.join(dataRoot, 'tls'));
  } catch (e) {
    log(`booblik-tls: ${(e as Error).message}`);
    fs.rmSync(dataRoot, { recursive: true, force: true });
    process.exit(2);
  }
}
