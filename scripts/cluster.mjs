#!/usr/bin/env node
/**
 * `npm run cluster`: a local three-broker cluster on loopback. Starts etcd (installed with apt-get
 * when missing) and brokers b1, b2, b3 in zones a, b and c, each with its own data directory under
 * ./cluster-data, and prints their addresses and pids. A broker that exits once the cluster is up
 * (SIGKILL included: that is how to watch a failover) is reported with its exit code or signal, the
 * others keep running, and `restart b2` (or `r b2`) typed here starts it again. On Ctrl-C the brokers
 * are stopped one at a time (SIGTERM, by pid), then etcd. Run it again and the cluster comes back
 * with its topics and records.
 *
 * `npm run cluster -- --secure`: the same cluster with TLS and authentication required, on a CA,
 * certificates, token keys and an admin password made once under <cluster data>/secure/ (see
 * secure-files.mjs); it prints how to connect as admin and how to issue a token.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startEtcd } = await import(path.join(root, 'packages/cluster/dist/test-support/etcd-server.js'));
const dataRoot = path.resolve(process.env.BOOBLIK_CLUSTER_DATA ?? 'cluster-data');
const basePort = Number(process.env.BOOBLIK_CLUSTER_PORT ?? 9092);
const main = path.join(root, 'packages/broker/dist/main.js');
const brokers = [
  { id: 'b1', zone: 'a', port: basePort, httpPort: basePort + 1 },
  { id: 'b2', zone: 'b', port: basePort + 2, httpPort: basePort + 3 },
  { id: 'b3', zone: 'c', port: basePort + 4, httpPort: basePort + 5 },
].map((b) => ({ ...b, child: undefined, exit: undefined }));

const say = (line) => process.stdout.write(`cluster: ${line}\n`);

// Anything but --secure is refused: a mistyped `--secure=yes` must not start an open cluster.
const unknown = process.argv.slice(2).filter((a) => a !== '--secure');
if (unknown.length > 0) {
  process.stderr.write(`cluster: unknown argument ${unknown[0]}: the only one is --secure\n`);
  process.exit(2);
}
const secureMode = process.argv.includes('--secure');
let secure;
if (secureMode) {
  const { ensureSecureFiles, readPassword } = await import('./secure-files.mjs');
  try {
    secure = await ensureSecureFiles(
      path.join(dataRoot, 'secure'),
      brokers.map((b) => b.id),
    );
    secure.password = readPassword(secure.adminPassword);
  } catch (error) {
    process.stderr.write(`cluster: --secure: ${error.message}\n`);
    process.exit(2);
  }
  say(
    secure.made.length > 0
      ? `made ${secure.made.map((f) => path.basename(f)).join(', ')} in ${secure.dir}`
      : `TLS and authentication from ${secure.dir}`,
  );
}

fs.mkdirSync(path.join(dataRoot, 'etcd'), { recursive: true });
say(`starting etcd (data in ${path.join(dataRoot, 'etcd')})`);
const etcd = await startEtcd({ dataDir: path.join(dataRoot, 'etcd'), ownProcessGroup: true });
say(`etcd on ${etcd.endpoint} (pid ${etcd.pid})`);

function argsOf(b) {
  return [
    main,
    `--data.dir=${path.join(dataRoot, b.id)}`,
    `--port=${b.port}`,
    `--http.port=${b.httpPort}`,
    `--cluster.etcd=${etcd.endpoint}`,
    `--broker.id=${b.id}`,
    `--broker.zone=${b.zone}`,
    ...(secure === undefined ? [] : secureArgs(b)),
  ];
}

/** TLS and authentication required; file paths only, so the printed command line holds no secret. */
function secureArgs(b) {
  return [
    '--tls=required',
    `--tls.cert.file=${secure.brokers[b.id].cert}`,
    `--tls.key.file=${secure.brokers[b.id].key}`,
    `--tls.ca.file=${secure.ca}`,
    '--auth=required',
    `--auth.token.keys.file=${secure.keys}`,
    '--auth.superusers=admin',
  ];
}

/**
 * The first user, admin, from the password file: in the environment, never in argv. Once a user
 * exists (in etcd) the broker ignores it, so a broker restarted by hand needs none.
 */
function envOf() {
  if (secure === undefined) return process.env;
  return { ...process.env, BOOBLIK_BOOTSTRAP_USER: `admin:${secure.password}` };
}

/** A word quoted for a POSIX shell, when it needs it. */
const quote = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);

/** The command line that starts `b` by hand, quoted for a POSIX shell. */
function commandLine(b) {
  return [process.execPath, ...argsOf(b)].map(quote).join(' ');
}

function describeExit(code, signal) {
  return signal !== null ? `killed by ${signal}` : `exit code ${code}`;
}

let ready = false;
let stopping = false;

/** Starts `b`; resolves once it listens, rejects if it exits first. */
function startBroker(b) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argsOf(b), {
      env: envOf(),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C reaches this script only, which stops each broker once, by pid.
      detached: true,
    });
    b.child = child;
    b.exit = undefined;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        process.stdout.write(`[${b.id}] ${line}\n`);
        if (line.includes('booblik listening on')) resolve();
      });
    }
    child.once('exit', (code, signal) => {
      b.exit = describeExit(code, signal);
      reject(new Error(`${b.id} exited (${b.exit}) before it listened`));
      if (stopping) return;
      if (!ready) {
        void stopAll(1); // a broker that cannot start at all (a port in use, a bad directory)
        return;
      }
      const others = brokers.filter((o) => o !== b && o.exit === undefined).map((o) => o.id);
      say(
        `${b.id} exited (${b.exit}); ${others.length > 0 ? `${others.join(', ')} keep running` : 'no broker is running'}. ` +
          `Type "restart ${b.id}" (or "r ${b.id}") to start it again, or run it yourself:\n` +
          `  ${commandLine(b)}`,
      );
    });
  });
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  say('stopping the brokers one at a time, then etcd');
  // One at a time, as a rolling restart does: each hands its partitions to brokers still running,
  // rather than all three handing them to each other while every one of them is stopping.
  for (const b of brokers) {
    const child = b.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      process.kill(child.pid, 'SIGTERM');
    });
    say(`${b.id} stopped`);
  }
  await etcd.stop('SIGTERM');
  say('etcd stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  await Promise.all(brokers.map(startBroker));
} catch (error) {
  process.stderr.write(`cluster: ${error.message}\n`);
  await stopAll(1);
}
ready = true;
const status = () =>
  brokers
    .map(
      (b) =>
        `${b.id} (zone ${b.zone}) 127.0.0.1:${b.port} ${b.exit === undefined ? `pid ${b.child.pid}` : `exited (${b.exit})`}`,
    )
    .join(', ');
const tryLine =
  secure === undefined
    ? `try: npx booblik topics apply ... --broker 127.0.0.1:${basePort}; kill -9 a broker's pid to watch a failover.\n`
    : 'TLS and authentication required; connect as admin (a superuser) with:\n' +
      `  npx booblik metadata --broker 127.0.0.1:${basePort} --tls.ca ${quote(secure.ca)} --user admin --password-file ${quote(secure.adminPassword)}\n` +
      'or with a token (to a file, then --token-file FILE in place of --user and --password-file):\n' +
      `  npx booblik tokens issue --keys-file ${quote(secure.keys)} --subject NAME --ttl 1h\n` +
      "kill -9 a broker's pid to watch a failover.\n";
say(
  `ready: ${status()}\n` +
    `etcd ${etcd.endpoint}; data in ${dataRoot}\n` +
    tryLine +
    'Type "restart ID" (or "r ID") to start an exited broker again, "status" to list them; Ctrl-C stops everything.',
);

// Commands typed on stdin; a closed stdin (a script, nohup) just means none will come.
createInterface({ input: process.stdin }).on('line', (line) => {
  if (stopping) return;
  const [word, id] = line.trim().split(/\s+/);
  if (word === undefined || word === '') return;
  if (word === 'status' || word === 's') return say(status());
  if (word !== 'restart' && word !== 'r')
    return say(`"${line.trim()}": expected "restart ID" (or "r ID") or "status"`);
  const b = brokers.find((x) => x.id === id);
  if (b === undefined)
    return say(`restart: expected one of ${brokers.map((x) => x.id).join(', ')}, got "${id ?? ''}"`);
  if (b.exit === undefined) return say(`${b.id} is running (pid ${b.child.pid})`);
  say(`restarting ${b.id}`);
  // A restart that fails is reported by the exit it ends in.
  startBroker(b).then(
    () => say(`${b.id} is back (pid ${b.child.pid})`),
    () => {},
  );
});
