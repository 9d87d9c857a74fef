#!/usr/bin/env node
/**
 * `npm run cluster`: a local three-broker cluster on loopback. Starts etcd (installed with apt-get
 * when missing) and brokers b1, b2, b3 in zones a, b and c, each with its own data directory under
 * ./cluster-data, prints their addresses, and on Ctrl-C stops the brokers (SIGTERM, by pid), then
 * etcd. Run it again and the cluster comes back with its topics and records.
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
const brokers = [
  { id: 'b1', zone: 'a', port: basePort, httpPort: basePort + 1 },
  { id: 'b2', zone: 'b', port: basePort + 2, httpPort: basePort + 3 },
  { id: 'b3', zone: 'c', port: basePort + 4, httpPort: basePort + 5 },
];

fs.mkdirSync(path.join(dataRoot, 'etcd'), { recursive: true });
process.stdout.write(`starting etcd (data in ${path.join(dataRoot, 'etcd')})\n`);
const etcd = await startEtcd({ dataDir: path.join(dataRoot, 'etcd'), ownProcessGroup: true });
process.stdout.write(`etcd on ${etcd.endpoint}\n`);

const children = [];
let stopping = false;
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write('stopping the brokers one at a time, then etcd\n');
  // One at a time, as a rolling restart does: each hands its partitions to brokers still running,
  // rather than all three handing them to each other while every one of them is stopping.
  for (const c of children) {
    await new Promise((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', resolve);
      process.kill(c.pid, 'SIGTERM');
    });
  }
  await etcd.stop('SIGTERM');
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

const main = path.join(root, 'packages/broker/dist/main.js');
const listening = brokers.map(
  (b) =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          main,
          `--data.dir=${path.join(dataRoot, b.id)}`,
          `--port=${b.port}`,
          `--http.port=${b.httpPort}`,
          `--cluster.etcd=${etcd.endpoint}`,
          `--broker.id=${b.id}`,
          `--broker.zone=${b.zone}`,
        ],
        // Its own process group: Ctrl-C reaches this script only, which stops each broker once, by pid.
        { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
      );
      children.push(child);
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (line) => {
          process.stdout.write(`[${b.id}] ${line}\n`);
          if (line.includes('booblik listening on')) resolve();
        });
      }
      child.once('exit', (code, signal) => {
        reject(new Error(`${b.id} exited (${signal ?? code})`));
        if (!stopping) void stopAll(1);
      });
    }),
);
try {
  await Promise.all(listening);
} catch (error) {
  process.stderr.write(`cluster: ${error.message}\n`);
  await stopAll(1);
}
process.stdout.write(
  `\ncluster ready: ${brokers.map((b) => `${b.id} (zone ${b.zone}) 127.0.0.1:${b.port}`).join(', ')}\n` +
    `etcd ${etcd.endpoint}; data in ${dataRoot}\n` +
    `try: npx booblik topics apply ... --broker 127.0.0.1:${basePort}; Ctrl-C stops everything\n`,
);
