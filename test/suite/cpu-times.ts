/**
 * The CPU side of the suite's accounting: what a test process reports (test/suite/cpu-probe.ts),
 * how the runner reads it back, and the runner's own total (every test process it reaped, and
 * what they reaped in turn).
 */
import { readFileSync, rmSync } from 'node:fs';

/** Linux's user-space clock tick (`getconf CLK_TCK`), fixed at 100 by its ABI. */
export const CLOCK_TICKS_PER_S = 100;

/** CPU seconds (user + system) of one test process and of its reaped descendants. */
export interface FileCpu {
  own: number;
  children: number;
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
 * CPU seconds of this process's reaped descendants (cutime + cstime, fields 16 and 17 of
 * /proc/self/stat): those it waited for, and what they had waited for in turn. 0 off Linux.
 */
export function reapedCpuSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[16 - 3]) + Number(fields[17 - 3])) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}
