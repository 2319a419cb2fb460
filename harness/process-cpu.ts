import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The fields of a /proc/<pid>/stat line after the command name (which may hold spaces). */
const fieldsOf = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

async function statFields(pid: number | 'self'): Promise<string[]> {
  return fieldsOf(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/** CPU seconds of a process, and of the children it reaped, from its /proc/<pid>/stat line. */
export function cpuOfStat(stat: string): { self: number; reaped: number } {
  const f = fieldsOf(stat);
  return { self: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND, reaped: (Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND };
}

/**
 * CPU seconds (user + system) a process has used so far, and those of its children it has
 * reaped (the kernel adds a child's CPU to its parent's when the parent waits for it: the task
 * runners' CPU shows on the spawner that started them).
 */
export async function processCpu(pid: number | 'self'): Promise<{ self: number; reaped: number }> {
  return cpuOfStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/** The pids whose parent is `pid`. */
export async function childPids(pid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = await statFields(Number(name)).catch(() => null);
    if (fields?.[1] === String(pid)) pids.push(Number(name));
  }
  return pids;
}

/** CPU seconds (user + system) another process has used so far. */
export async function processCpuSeconds(pid: number): Promise<number> {
  return (await processCpu(pid)).self;
}

/** CPU seconds (user + system) this process has used so far. */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
