import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type { GpuDevice } from '../../schemas/machine.js';
import type { MachineSection } from '../../schemas/machine-history.js';
import { NVIDIA_QUERY_FIELDS, parseComputeApps, parseNvidiaSmi, parseRocmSmi } from './gpu-parse.js';

const run = promisify(execFile);

/** Which detection commands to run; tests point these at fixtures or at names that do not exist. */
export interface GpuCommands {
  nvidiaSmi: string;
  rocmSmi: string;
}

export const DEFAULT_GPU_COMMANDS: Readonly<GpuCommands> = Object.freeze({ nvidiaSmi: 'nvidia-smi', rocmSmi: 'rocm-smi' });

/** The commands config `machine.gpu_commands` names (machine_status, the history and the local executor's GPU count ask the same tools). */
export function gpuCommandsOf(section: MachineSection['gpu_commands']): GpuCommands {
  return { nvidiaSmi: section.nvidia_smi, rocmSmi: section.rocm_smi };
}

/** A hung driver must not hang `machine_status`. */
const PROBE_TIMEOUT_MS = 5_000;

/** Runs a detection command; a missing command, a failure or a timeout all mean "no devices". */
async function query(command: string, args: string[], parse: (text: string) => GpuDevice[], signal?: AbortSignal): Promise<GpuDevice[]> {
  if (command === '') return []; // not on this machine (presentGpuCommands)
  try {
    const { stdout } = await run(command, args, { timeout: PROBE_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, ...(signal ? { signal } : {}) });
    return parse(stdout);
  } catch {
    return [];
  }
}

/** GPU memory by process from nvidia-smi; null where it did not answer (no NVIDIA GPU, no driver, no tool). */
export async function probeGpuProcessMemory(nvidiaSmi: string, signal?: AbortSignal): Promise<Map<number, number> | null> {
  if (nvidiaSmi === '') return null;
  try {
    const { stdout } = await run(nvidiaSmi, ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { timeout: PROBE_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, ...(signal ? { signal } : {}) });
    return parseComputeApps(stdout);
  } catch {
    return null;
  }
}

/** Lists NVIDIA and AMD GPUs by asking nvidia-smi and rocm-smi concurrently. */
export async function probeGpus(commands: GpuCommands = DEFAULT_GPU_COMMANDS, signal?: AbortSignal): Promise<GpuDevice[]> {
  const [nvidia, amd] = await Promise.all([
    query(commands.nvidiaSmi, [`--query-gpu=${NVIDIA_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'], parseNvidiaSmi, signal),
    query(commands.rocmSmi, ['--showproductname', '--showmeminfo', 'vram', '--showuse', '--showtemp', '--showuniqueid', '--json'], parseRocmSmi, signal),
  ]);
  return [...nvidia, ...amd];
}

/**
 * Shares one probe among concurrent callers, so a burst of `machine_status` calls runs each
 * detection command once instead of once per request.
 */
export function sharedGpuProbe(commands: GpuCommands = DEFAULT_GPU_COMMANDS): () => Promise<GpuDevice[]> {
  let pending: Promise<GpuDevice[]> | undefined;
  return () => {
    pending ??= probeGpus(commands).finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** Whether `command` names an executable file: a path as it is, a bare name on PATH. */
export function commandFound(command: string, path = process.env['PATH'] ?? ''): boolean {
  const candidates = command.includes('/') ? [command] : path.split(delimiter).filter(Boolean).map((dir) => join(dir, command));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * `commands` with those that cannot be found blanked (probes skip a blank command), looked up
 * again at most every `recheckMs`. For the machine history, which probes every few seconds: on a
 * machine without GPU tools each probe started two processes only to fail, and each start held
 * the event loop while the service forked (an idle `/health` max of 5 ms became 27 ms).
 */
export function presentGpuCommands(commands: GpuCommands, recheckMs = 60_000): () => GpuCommands {
  let checkedAt = -Infinity;
  let present: GpuCommands = commands;
  return () => {
    if (Date.now() - checkedAt >= recheckMs) {
      checkedAt = Date.now();
      present = { nvidiaSmi: commandFound(commands.nvidiaSmi) ? commands.nvidiaSmi : '', rocmSmi: commandFound(commands.rocmSmi) ? commands.rocmSmi : '' };
    }
    return present;
  };
}
