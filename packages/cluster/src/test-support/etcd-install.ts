import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Debian's package: etcd 3.4, the server binary alone (etcdctl is `etcd-client`, not needed). */
const DEBIAN_PACKAGE = 'etcd-server';
/** apt-get waits this long for another apt (a second test file installing at the same time). */
const APT_LOCK_WAIT_S = 300;
const APT_TIMEOUT_MS = 10 * 60_000;

/** The etcd binary to run: `BOOBLIK_ETCD`, else `etcd` on PATH; null when there is none. */
export function findEtcd(): string | null {
  const override = process.env['BOOBLIK_ETCD'];
  if (override !== undefined && override !== '') return override;
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(path.delimiter)) {
    const candidate = path.join(dir || '.', 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/**
 * The etcd binary, installed first with apt-get when missing (CI starts on a machine without it,
 * as root). Throws with the reason when it cannot be had, so the cluster tests fail, never skip.
 */
export function ensureEtcdInstalled(): string {
  const found = findEtcd();
  if (found !== null) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `etcd is not installed and installing it needs root: run apt-get install -y ${DEBIAN_PACKAGE}`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync(
      'apt-get',
      [
        'install',
        '-y',
        '--no-install-recommends',
        '-o',
        `DPkg::Lock::Timeout=${APT_LOCK_WAIT_S}`,
        DEBIAN_PACKAGE,
      ],
      { env, encoding: 'utf8', timeout: APT_TIMEOUT_MS },
    );
  let result = install();
  if (result.status !== 0) {
    // A fresh machine has no package lists yet.
    execFileSync('apt-get', ['-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_S}`, 'update'], {
      env,
      stdio: 'ignore',
      timeout: APT_TIMEOUT_MS,
    });
    result = install();
  }
  const installed = findEtcd();
  if (result.status !== 0 || installed === null) {
    const why =
      (result.error?.message ?? `${result.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ')) ||
      'no etcd binary after install';
    throw new Error(`etcd could not be installed (apt-get install ${DEBIAN_PACKAGE}): ${why}`);
  }
  return installed;
}
