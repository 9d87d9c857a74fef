/**
 * Who used the CPU while a benchmark step ran: each named process (from /proc), the bench process
 * itself (the load), and the rest of the machine, as % of one core (on 2 cores, 200 is all of it).
 * A step whose shares add up to about 200 was bound by the machine, not by what it measured.
 */
import os from 'node:os';
import { machineCpuTicks, processCpuSeconds } from './suite/servers.js';

export interface CpuShares {
  /** By the names given to `start`. */
  processes: Record<string, number>;
  /** The bench process: the load generator. */
  load: number;
  /** Everything else the machine ran meanwhile (other users of a shared machine). */
  rest: number;
}

interface Snapshot {
  at: number;
  pids: Record<string, { pid: number; cpu: number }>;
  load: NodeJS.CpuUsage;
  machine: { busy: number; total: number };
}

export class CpuMeter {
  /** `pids` is asked at the start and at the end: a process restarted meanwhile counts from its start. */
  constructor(private readonly pids: () => Record<string, number | undefined>) {}

  start(): Snapshot {
    const pids: Snapshot['pids'] = {};
    for (const [name, pid] of Object.entries(this.pids()))
      if (pid !== undefined) pids[name] = { pid, cpu: processCpuSeconds(pid) };
    return { at: performance.now(), pids, load: process.cpuUsage(), machine: machineCpuTicks() };
  }

  stop(since: Snapshot): CpuShares {
    const seconds = (performance.now() - since.at) / 1000;
    const share = (cpuSeconds: number) => (cpuSeconds / seconds) * 100;
    const processes: Record<string, number> = {};
    let ours = 0;
    for (const [name, pid] of Object.entries(this.pids())) {
      if (pid === undefined) continue;
      const before = since.pids[name];
      const used = processCpuSeconds(pid) - (before?.pid === pid ? before.cpu : 0);
      processes[name] = share(used);
      ours += processes[name];
    }
    const load = process.cpuUsage(since.load);
    const loadShare = share((load.user + load.system) / 1e6);
    const m = machineCpuTicks();
    const machine =
      ((m.busy - since.machine.busy) / Math.max(1, m.total - since.machine.total)) * os.cpus().length * 100;
    return { processes, load: loadShare, rest: Math.max(0, machine - ours - loadShare) };
  }

  async measure<T>(run: () => Promise<T>): Promise<{ value: T; cpu: CpuShares }> {
    const since = this.start();
    const value = await run();
    return { value, cpu: this.stop(since) };
  }
}
