import { execFile } from 'node:child_process';
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
  try {
    const { stdout } = await run(command, args, { timeout: PROBE_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, ...(signal ? { signal } : {}) });
    return parse(stdout);
  } catch {
    return [];
  }
}

/** GPU memory by process from nvidia-smi; null where it did not answer (no NVIDIA GPU, no driver, no tool). */
export async function probeGpuProcessMemory(nvidiaSmi: string, signal?: AbortSignal): Promise<Map<number, number> | null> {
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
