import { readFile } from 'node:fs/promises';
import { freemem, totalmem } from 'node:os';
import type { MachineInfo } from '../../schemas/machine.js';

export type MemoryInfo = MachineInfo['memory'];

function summarize(total: number, available: number): MemoryInfo {
  const used = Math.max(0, total - available);
  return {
    total_bytes: total,
    used_bytes: used,
    available_bytes: available,
    usage_percent: total > 0 ? Math.round((used / total) * 1000) / 10 : 0,
  };
}

/**
 * Parses /proc/meminfo. `MemAvailable` (what can be allocated without swapping, page cache
 * included) is the honest "available"; `MemFree` alone would report a busy cache as used.
 */
export function parseMeminfo(text: string): MemoryInfo | undefined {
  const kib = (key: string) => {
    const match = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  const total = kib('MemTotal');
  const available = kib('MemAvailable') ?? kib('MemFree');
  return total === undefined || available === undefined ? undefined : summarize(total, available);
}

/** Memory now: /proc/meminfo, or Node's counters where there is no /proc. */
export async function readMemory(): Promise<MemoryInfo> {
  const parsed = await readFile('/proc/meminfo', 'utf8').then(parseMeminfo, () => undefined);
  return parsed ?? summarize(totalmem(), freemem());
}
