/**
 * The files `npm run cluster -- --secure` runs on, made once in one directory and kept across runs:
 * a CA (ca.pem, ca.key), a server certificate per broker for 127.0.0.1 and localhost (<id>.pem,
 * <id>.key: brokers dial each other with it too, so it is also good for clientAuth), a token keys
 * file (keys: `k1 <32 random bytes, base64url>`) and the admin's password (admin-password). EC P-256
 * keys made by the `openssl` command (execFile, no shell). The directory is 0700 and every secret
 * 0600; each file is written under a temporary name and renamed, so a run cut short leaves either a
 * whole file or none, and the next run makes what is missing.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Long enough that a local cluster never meets an expiry; delete the directory to start over. */
const CA_DAYS = 3650;
/** Under the 825 days some TLS stacks cap a server certificate at. */
const SERVER_DAYS = 825;
const LOCAL_NAMES = 'IP:127.0.0.1,DNS:localhost';
/** 32 bytes: the least booblik.auth.token.keys.file takes. */
const TOKEN_KEY_BYTES = 32;
/** 24 random bytes: 32 base64url characters, no ':' (BOOBLIK_BOOTSTRAP_USER splits on the first). */
const PASSWORD_BYTES = 24;

export class OpensslMissingError extends Error {
  name = 'OpensslMissingError';
}

async function openssl(args, cwd) {
  try {
    await run('openssl', args, { cwd });
  } catch (error) {
    if (error.code === 'ENOENT')
      throw new OpensslMissingError(
        'the openssl command is needed to make the certificates of --secure: install it (apt-get install openssl) and run again',
        { cause: error },
      );
    // openssl's stderr names files and options, never a key's content.
    throw new Error(`openssl ${args[0]} failed: ${(error.stderr ?? error.message).trim()}`, { cause: error });
  }
}

const exists = (file) => fs.existsSync(file);

/** `file` appears whole, mode `mode`, from what `make(tmp)` wrote at a temporary path beside it. */
async function writeOnce(file, mode, make) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  try {
    await make(tmp);
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** A key and a certificate written to temporary paths, then both renamed into place. */
async function writePair(pair, make) {
  const tmp = { cert: `${pair.cert}.tmp-${process.pid}`, key: `${pair.key}.tmp-${process.pid}` };
  try {
    await make(tmp);
    fs.chmodSync(tmp.key, 0o600);
    fs.chmodSync(tmp.cert, 0o644);
    // The key first: a pair whose certificate exists always has its key.
    fs.renameSync(tmp.key, pair.key);
    fs.renameSync(tmp.cert, pair.cert);
  } finally {
    fs.rmSync(tmp.cert, { force: true });
    fs.rmSync(tmp.key, { force: true });
  }
}

async function makeCa(dir, pair) {
  await writePair(pair, (tmp) =>
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        tmp.key,
        '-out',
        tmp.cert,
        '-days',
        String(CA_DAYS),
        '-subj',
        '/CN=booblik local cluster CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    ),
  );
}

async function makeServer(dir, ca, id, pair) {
  const csr = path.join(dir, `${id}.csr.tmp-${process.pid}`);
  const ext = path.join(dir, `${id}.ext.tmp-${process.pid}`);
  try {
    fs.writeFileSync(
      ext,
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' +
        `extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=${LOCAL_NAMES}\n`,
    );
    await writePair(pair, async (tmp) => {
      await openssl(
        [
          'req',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          tmp.key,
          '-out',
          csr,
          '-subj',
          `/CN=booblik ${id}`,
        ],
        dir,
      );
      await openssl(
        [
          'x509',
          '-req',
          '-in',
          csr,
          '-CA',
          ca.cert,
          '-CAkey',
          ca.key,
          // A random serial: no .srl file to keep, and no two certificates of this CA share one.
          '-set_serial',
          `0x${randomBytes(8).toString('hex')}`,
          '-days',
          String(SERVER_DAYS),
          '-extfile',
          ext,
          '-out',
          tmp.cert,
        ],
        dir,
      );
    });
  } finally {
    fs.rmSync(csr, { force: true });
    fs.rmSync(ext, { force: true });
  }
}

/**
 * Makes what is missing in `dir` and returns the paths. A CA made anew (its cert or key was
 * missing) makes every broker certificate anew, since the old ones are of another CA.
 * `made` lists the files written by this call (empty when everything was there).
 */
export async function ensureSecureFiles(dir, brokerIds) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const made = [];
  const ca = { cert: path.join(dir, 'ca.pem'), key: path.join(dir, 'ca.key') };
  const caNew = !exists(ca.cert) || !exists(ca.key);
  if (caNew) {
    await makeCa(dir, ca);
    made.push(ca.cert);
  }
  const brokers = {};
  for (const id of brokerIds) {
    const pair = { cert: path.join(dir, `${id}.pem`), key: path.join(dir, `${id}.key`) };
    if (caNew || !exists(pair.cert) || !exists(pair.key)) {
      await makeServer(dir, ca, id, pair);
      made.push(pair.cert);
    }
    brokers[id] = pair;
  }
  const keys = path.join(dir, 'keys');
  if (!exists(keys)) {
    await writeOnce(keys, 0o600, (tmp) =>
      fs.writeFileSync(tmp, `k1 ${randomBytes(TOKEN_KEY_BYTES).toString('base64url')}\n`, { mode: 0o600 }),
    );
    made.push(keys);
  }
  const adminPassword = path.join(dir, 'admin-password');
  if (!exists(adminPassword)) {
    await writeOnce(adminPassword, 0o600, (tmp) =>
      fs.writeFileSync(tmp, `${randomBytes(PASSWORD_BYTES).toString('base64url')}\n`, { mode: 0o600 }),
    );
    made.push(adminPassword);
  }
  return { dir, ca: ca.cert, brokers, keys, adminPassword, made };
}

/** The admin's password from its file: the first line, as `booblik --password-file` reads it. */
export function readPassword(file) {
  const password = fs.readFileSync(file, 'utf8').split(/\r?\n/, 1)[0];
  if (!password) throw new Error(`${file}: the file is empty (delete it and run again to make a new one)`);
  return password;
}
