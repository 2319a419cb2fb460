import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';

/** Cumulative CPU time over all cores, in clock ticks. */
export interface CpuTimes {
  busy: number;
  total: number;
}

/** Parses the aggregate `cpu` line of /proc/stat (iowait counts as idle; guest time is inside user). */
export function parseProcStat(text: string): CpuTimes | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return Number.isFinite(total) ? { busy: total - idle - iowait, total } : undefined;
}

/** Counts distinct (physical id, core id) pairs of /proc/cpuinfo; null when the file does not say. */
export function parsePhysicalCores(cpuinfo: string): number | null {
  const cores = new Set<string>();
  for (const block of cpuinfo.split(/\n\s*\n/)) {
    const core = /^core id\s*:\s*(\d+)/m.exec(block)?.[1];
    if (core === undefined) continue;
    cores.add(`${/^physical id\s*:\s*(\d+)/m.exec(block)?.[1] ?? '0'}:${core}`);
  }
  return cores.size > 0 ? cores.size : null;
}

/** Percentage of busy time between two readings, rounded to 0.1. */
export function usageBetween(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.round(Math.min(100, Math.max(0, ((after.busy - before.busy) / total) * 100)) * 10) / 10;
}

/** Reads the CPU times now: /proc/stat, or Node's per-core counters where there is no /proc. */
export async function readCpuTimes(): Promise<CpuTimes> {
  const parsed = await readFile('/proc/stat', 'utf8').then(parseProcStat, () => undefined);
  if (parsed) return parsed;
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    busy += times.user + times.nice + times.sys + times.irq;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { busy, total };
}

/** Reads the number of physical cores once; null when unknown. */
export async function readPhysicalCores(): Promise<number | null> {
  return readFile('/proc/cpuinfo', 'utf8').then(parsePhysicalCores, () => null);
}

/**
 * Samples CPU usage in the background so `machine_status` never waits for a sample. Before the
 * first interval ends, a request measures from the reading taken at start (a short sample).
 */
export class CpuSampler {
  #previous: CpuTimes;
  #usage: number | undefined;
  readonly #timer: NodeJS.Timeout;

  private constructor(first: CpuTimes, intervalMs: number) {
    this.#previous = first;
    this.#timer = setInterval(() => void this.#sample(), intervalMs);
    this.#timer.unref();
  }

  static async start(intervalMs = 1_000): Promise<CpuSampler> {
    return new CpuSampler(await readCpuTimes(), intervalMs);
  }

  async #sample(): Promise<void> {
    const now = await readCpuTimes();
    this.#usage = usageBetween(this.#previous, now);
    this.#previous = now;
  }

  /** The latest usage percentage. */
  async usage(): Promise<number> {
    return this.#usage ?? usageBetween(this.#previous, await readCpuTimes());
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
