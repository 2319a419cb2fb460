import { readdirSync, readFileSync } from 'node:fs';

/** What `/proc/<pid>/stat` says about a process (Linux). */
export interface ProcStat {
  pid: number;
  /** One letter: R, S, D, Z (zombie), X (dead), T ... */
  state: string;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks after boot: with the pid, it identifies one process across pid reuse. */
  startTicks: number;
}

/** Parses `/proc/<pid>/stat`; null when the process does not exist. */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    startTicks: Number(fields[19]),
  };
}

/**
 * Whether this exact process (pid and start time) still runs. A zombie counts as gone: here an
 * orphan may linger as one, and `kill(pid, 0)` would still succeed on it.
 */
export function isAlive(pid: number, startTicks: number | null): boolean {
  const stat = readProcStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
  return startTicks === null || stat.startTicks === startTicks;
}

/** Every live process of the machine (one pass over /proc). */
export function listProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat && stat.state !== 'Z' && stat.state !== 'X') out.push(stat);
  }
  return out;
}

/** Descendants of `pid` through the ppid tree, including those that left its process group. */
export function findDescendants(pid: number, all = listProcesses()): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcStat[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Live members of a process group. */
export function groupMembers(pgid: number): ProcStat[] {
  return listProcesses().filter((p) => p.pgrp === pgid);
}
