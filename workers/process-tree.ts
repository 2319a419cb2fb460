import { readdir, readFile } from 'node:fs/promises';

/** The fields of `/proc/<pid>/stat` needed to find and safely signal a process tree. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** Start time in clock ticks since boot: tells a live process from a later one reusing its pid. */
  startTime: string;
}

/** Parses one `/proc/<pid>/stat` line; `comm` may hold spaces and parentheses, so split after the last `)`. */
export function parseStat(line: string): ProcessEntry | undefined {
  const close = line.lastIndexOf(')');
  const pid = Number.parseInt(line, 10);
  if (close < 0 || !Number.isInteger(pid)) return undefined;
  // After the comm: state(3) ppid(4) pgrp(5) session(6) ... starttime(22); index 0 is field 3.
  const fields = line.slice(close + 2).split(' ');
  if (fields.length < 20) return undefined;
  return { pid, state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19]! };
}

/**
 * Whether reading /proc failed for want of the reader's own resources (out of file descriptors
 * or memory): that says nothing of the process it was read for.
 */
export function cannotTellNow(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM' || code === 'EAGAIN';
}

/**
 * Reads one process, or undefined when it is gone (or /proc is unavailable). Throws when this
 * process cannot read /proc right now (`cannotTellNow`): a service out of descriptors must not
 * take a live runner for a dead one.
 */
export async function readProcess(pid: number): Promise<ProcessEntry | undefined> {
  try {
    return parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch (err) {
    if (cannotTellNow(err)) throw err;
    return undefined;
  }
}

/**
 * Whether the process still runs. A zombie counts as gone: it can no longer do anything, and an
 * orphaned zombie may never be reaped in a container whose init does not reap. When /proc cannot
 * be read right now it counts as running: the callers (watchers, lock checks, kills) ask again or
 * err on the safe side.
 */
export async function isAlive(pid: number, startTime?: string): Promise<boolean> {
  let entry: ProcessEntry | undefined;
  try {
    entry = await readProcess(pid);
  } catch {
    return true;
  }
  if (!entry || entry.state === 'Z' || entry.state === 'X') return false;
  return startTime === undefined || entry.startTime === startTime;
}

/** Every process visible in /proc. */
export async function listProcesses(): Promise<ProcessEntry[]> {
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return [];
  }
  // A process that cannot be read right now is left out, as one that ended meanwhile.
  const entries = await Promise.all(names.filter((n) => /^\d+$/.test(n)).map((n) => readProcess(Number(n)).catch(() => undefined)));
  return entries.filter((e): e is ProcessEntry => e !== undefined);
}

/**
 * Processes to find by their environment: those whose environment (as they started) holds `entry`
 * (`NAME=value`), and started at `since` or later (clock ticks since boot, as `startTime`); without
 * `since`, at or after the oldest live root (every process when none lives).
 */
export interface ProcessMark {
  entry: string;
  since?: number;
}

/** Whether the process's environment (as it started) holds the entry `mark` (`NAME=value`). */
async function carriesMark(pid: number, mark: string): Promise<boolean> {
  try {
    return `\0${await readFile(`/proc/${pid}/environ`, 'latin1')}\0`.includes(`\0${mark}\0`);
  } catch {
    return false; // gone meanwhile, or not ours to read
  }
}

/**
 * The roots and all their descendants by parent pid, plus every member of the roots' process
 * groups, plus (with `mark`, an environment entry every process of the tree inherits) every
 * process carrying the mark, and their descendants. Walking parents finds
 * children that left the group with `setsid`; the group catches members whose parent already
 * exited; the mark catches those that did both (a daemon, `(setsid cmd &)`). The mark costs a read
 * of the environment of every process younger than `mark.since` or the oldest live root: callers
 * pass it when they kill, not when they poll.
 */
export async function collectTree(roots: readonly number[], mark?: ProcessMark): Promise<ProcessEntry[]> {
  const all = await listProcesses();
  if (mark === undefined) return treeOf(all, roots);
  const groups = new Set(roots);
  // Whatever a live root started, it started after it: older processes (most of a machine's) need no look.
  const rootStarts = all.filter((e) => groups.has(e.pid)).map((e) => Number(e.startTime));
  const since = mark.since ?? (rootStarts.length > 0 ? Math.min(...rootStarts) : 0);
  const others = all.filter((e) => !groups.has(e.pid) && !groups.has(e.pgid) && e.pid !== process.pid && e.state !== 'Z' && Number(e.startTime) >= since);
  const marked = await Promise.all(others.map((e) => carriesMark(e.pid, mark.entry)));
  return treeOf(all, roots, others.filter((_, i) => marked[i]));
}

/**
 * The live members of a tree among `all` (one reading of /proc): the roots, the members of their
 * process groups, `extra`, and the descendants of all of these by parent pid.
 */
export function treeOf<T extends ProcessEntry>(all: readonly T[], roots: readonly number[], extra: readonly T[] = []): T[] {
  const children = new Map<number, T[]>();
  for (const entry of all) {
    const list = children.get(entry.ppid);
    if (list) list.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const groups = new Set(roots);
  const found = new Map<number, T>();
  for (const entry of all) if (groups.has(entry.pid) || groups.has(entry.pgid)) found.set(entry.pid, entry);
  for (const entry of extra) found.set(entry.pid, entry);
  const queue = [...found.keys()];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  return [...found.values()].filter((e) => e.state !== 'Z');
}
