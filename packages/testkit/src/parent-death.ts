import { existsSync } from 'node:fs';

/** setpriv (util-linux) sets a parent-death signal, kept across the exec of the command it starts. */
const SETPRIV = '/usr/bin/setpriv';

/**
 * The command line that starts `command` so that it is SIGKILLed when the test process that started
 * it dies: a test file killed at its time bound leaves no broker or etcd running for the rest of the
 * suite. The pid stays the command's own (setpriv execs it). Without setpriv, the command as given.
 */
export function dyingWithParent(command: string, args: readonly string[]): [string, string[]] {
  return existsSync(SETPRIV)
    ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]]
    : [command, [...args]];
}
