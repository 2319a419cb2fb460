/**
 * The CPU side of the suite's accounting: what a test process reports (test/helpers/cpu-probe.ts),
 * how the runner reads it back, and CPU read from /proc for processes the test process never
 * reaps (daemons) and for the runner's own total.
 */
import { readFileSync, rmSync } from 'node:fs';
import { cpuOfStat } from '../../harness/process-cpu.js';

/** CPU seconds (user + system) of one test process, its reaped descendants, and daemons it counted. */
export interface FileCpu {
  own: number;
  children: number;
  /** Processes outside the test process's tree that a helper counted (`countCpu`), e.g. Slurm's daemons. */
  daemons: number;
}

/** Reads and removes the probe's file; undefined when the process wrote none (killed, crashed early). */
export function takeFileCpu(path: string): FileCpu | undefined {
  try {
    const cpu = JSON.parse(readFileSync(path, 'utf8')) as FileCpu;
    rmSync(path, { force: true });
    return cpu;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds a process used and reaped so far (0 when it is gone or off Linux). For `self`, the
 * reaped part alone is the CPU of every descendant waited for (and of what they waited for).
 */
export function statCpu(pid: number | 'self'): { self: number; reaped: number } {
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return { self: 0, reaped: 0 };
  }
}
