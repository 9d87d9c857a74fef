import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { connectEtcd } from '../etcd-client.js';
import { startEtcd } from './etcd-server.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('etcd kit: a restart on the same data keeps the keys, and cleanup leaves no process or directory', async (t) => {
  const etcd = await startEtcd();
  t.after(() => etcd.cleanup());
  const client = connectEtcd({ endpoints: [etcd.endpoint] });
  t.after(() => client.close());
  await client.put('/kit/key').value('kept');
  const firstPid = etcd.pid!;

  await etcd.stop('SIGTERM');
  assert.equal(alive(firstPid), false, 'etcd still running after stop');
  assert.equal(etcd.pid, undefined);
  await etcd.restart();
  assert.notEqual(etcd.pid, firstPid);
  assert.equal(await client.get('/kit/key').string(), 'kept');

  const pid = etcd.pid!;
  await etcd.cleanup();
  assert.equal(alive(pid), false, 'etcd still running after cleanup');
  assert.equal(existsSync(etcd.dataDir), false, 'data directory left behind');
});

test('etcd kit: two at once get ports of their own', async (t) => {
  const [a, b] = await Promise.all([startEtcd(), startEtcd()]);
  t.after(() => Promise.all([a.cleanup(), b.cleanup()]));
  const ports = new Set([a.clientPort, a.peerPort, b.clientPort, b.peerPort]);
  assert.equal(ports.size, 4);
});

test('etcd kit: an etcd that cannot run fails the start with the reason, never a skip', async (t) => {
  const saved = process.env['BOOBLIK_ETCD'];
  process.env['BOOBLIK_ETCD'] = '/nonexistent/etcd';
  t.after(() => {
    if (saved === undefined) delete process.env['BOOBLIK_ETCD'];
    else process.env['BOOBLIK_ETCD'] = saved;
  });
  await assert.rejects(
    startEtcd(),
    /etcd exited \(127\) before it answered:\nsetpriv: failed to execute \/nonexistent\/etcd|etcd could not be started \(\/nonexistent\/etcd\)/,
  );
});
