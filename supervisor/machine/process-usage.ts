import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parseStat, treeOf, type ProcessEntry } from '../../workers/process-tree.js';

/** A process as one sample sees it: its tree links plus the CPU time and memory it uses. */
export interface ProcessUsage extends ProcessEntry {
  /**
   * utime + stime in clock ticks. Not the reaped children's times (cutime, cstime): a child sampled
   * while alive would be counted again in its parent once reaped.
   */
  ticks: number;
  rssPages: number;
}

/** Parses `/proc/<pid>/stat` with its CPU times (fields 14-15) and resident set (field 24). */
export function parseStatUsage(line: string): ProcessUsage | undefined {
  const entry = parseStat(line);
  if (!entry) return undefined;
  // Index 0 is field 3 (state), as in parseStat.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssPages = Number(fields[21]);
  return Number.isFinite(ticks) && Number.isFinite(rssPages) ? { ...entry, ticks, rssPages } : undefined;
}

/** Lists the pids in /proc (none where there is no /proc). */
async function listPids(): Promise<number[]> {
  try {
    return (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
  } catch {
    return [];
  }
}

/** Reads the usage of `pids`, leaving out those gone meanwhile or not readable. */
async function readUsages(pids: readonly number[]): Promise<ProcessUsage[]> {
  const read = (pid: number) => readFile(`/proc/${pid}/stat`, 'latin1').then(parseStatUsage, () => undefined);
  const entries = await Promise.all(pids.map(read));
  return entries.filter((e): e is ProcessUsage => e !== undefined);
}

/** Every readable process with its usage. */
export async function readProcessUsages(): Promise<ProcessUsage[]> {
  return readUsages(await listPids());
}

/**
 * Reads, of the processes in /proc, only those a tree can hold now: the roots, the members of the
 * trees at the previous scan, and the pids that were not there at the previous scan (every new
 * process is one of them). A process that was there and in no tree cannot have joined one since
 * (a parent is never changed to a live tree member), unless its pid was reused in between: every
 * `fullEvery`-th scan reads every process, so such a process is missed for one minute at most at
 * the default interval. A new root (a Task started; its runner may have started children before
 * the root was known) also makes a full scan. A machine with thousands of processes pays for the
 * Tasks' trees and the processes started since, not for all of them, at each sample.
 */
export class ProcessScanner {
  readonly #fullEvery: number;
  #listed = new Set<number>();
  #members = new Set<number>();
  #roots = new Set<number>();
  #scans = 0;

  constructor(fullEvery = 12) {
    this.#fullEvery = fullEvery;
  }

  /** The processes trees rooted at `roots` may hold; `keep` then names the trees' members. */
  async scan(roots: readonly number[]): Promise<ProcessUsage[]> {
    const pids = await listPids();
    const full = this.#scans++ % this.#fullEvery === 0 || roots.some((root) => !this.#roots.has(root));
    const wanted = full ? pids : pids.filter((pid) => !this.#listed.has(pid) || this.#members.has(pid) || roots.includes(pid));
    this.#listed = new Set(pids);
    this.#roots = new Set(roots);
    return readUsages(wanted);
  }

  /** The members of the trees the last scan found: read again at the next one. */
  keep(members: Iterable<number>): void {
    this.#members = new Set(members);
  }

  /** No scan for a while (no Task ran): the next one reads every process. */
  forget(): void {
    this.#listed.clear();
    this.#members.clear();
    this.#roots.clear();
    this.#scans = 0;
  }
}

/** Units of /proc/<pid>/stat, asked of getconf once; Linux's usual values where it cannot say. */
export interface ProcUnits {
  ticksPerSecond: number;
  pageBytes: number;
}

export async function readProcUnits(): Promise<ProcUnits> {
  const ask = async (name: string, fallback: number) => {
    try {
      const value = Number((await promisify(execFile)('getconf', [name], { timeout: 2_000 })).stdout.trim());
      return Number.isInteger(value) && value > 0 ? value : fallback;
    } catch {
      return fallback;
    }
  };
  const [ticksPerSecond, pageBytes] = await Promise.all([ask('CLK_TCK', 100), ask('PAGESIZE', 4096)]);
  return { ticksPerSecond, pageBytes };
}

/** One Task's process tree in a sample. */
export interface TreeUsage {
  /** CPU since the tree's previous sample, 100 = one core; null at its first sample. */
  cpuPercent: number | null;
  rssBytes: number;
  pids: number[];
}

/**
 * CPU and memory of process trees from one sample to the next. A process's time is counted by
 * difference with the sample before (keyed by pid and start time, so a reused pid starts afresh);
 * a process born since then counts all its time.
 */
export class TreeUsageMeter {
  readonly #units: ProcUnits;
  /** Per tree root: when it was last sampled, and each member's ticks then. */
  #previous = new Map<string, { at: number; ticks: Map<string, number> }>();

  constructor(units: ProcUnits) {
    this.#units = units;
  }

  /** Measures each tree (`roots`: key → root pid) in `all`, taken at `at` (ms); trees not named are forgotten. */
  measure(all: readonly ProcessUsage[], roots: ReadonlyMap<string, number>, at: number): Map<string, TreeUsage> {
    const next = new Map<string, { at: number; ticks: Map<string, number> }>();
    const result = new Map<string, TreeUsage>();
    for (const [key, root] of roots) {
      const members = treeOf(all, [root]);
      if (members.length === 0) continue;
      const ticks = new Map(members.map((p) => [`${p.pid}:${p.startTime}`, p.ticks]));
      const before = this.#previous.get(key);
      let cpuPercent: number | null = null;
      if (before && at > before.at) {
        let used = 0;
        for (const [id, now] of ticks) used += Math.max(0, now - (before.ticks.get(id) ?? 0));
        const seconds = (at - before.at) / 1000;
        cpuPercent = Math.round((used / this.#units.ticksPerSecond / seconds) * 1000) / 10;
      }
      next.set(key, { at, ticks });
      const rssBytes = members.reduce((sum, p) => sum + p.rssPages, 0) * this.#units.pageBytes;
      result.set(key, { cpuPercent, rssBytes, pids: members.map((p) => p.pid) });
    }
    this.#previous = next;
    return result;
  }
}
