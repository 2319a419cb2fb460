import { availableParallelism } from 'node:os';
import type { Config } from '../../common/config.js';
import { gpuCommandsOf, probeGpus } from '../../machine/gpu-probe.js';
import type { Capacity } from './resource-pool.js';

/**
 * What the local executor may lease: this machine's cores, and its GPUs as `machine_status`
 * detects them (with the tools of `machine.gpu_commands`) unless config `service.gpus` says how
 * many (no probe then). The vendor of the first detected device picks CUDA_VISIBLE_DEVICES or
 * HIP_VISIBLE_DEVICES.
 */
export async function localCapacity(config: Config): Promise<Capacity> {
  const cpus = availableParallelism();
  if (config.executor.kind !== 'local') return { cpus, gpus: 0, gpuVendor: 'nvidia' };
  if (config.service.gpus !== null) return { cpus, gpus: config.service.gpus, gpuVendor: 'nvidia' };
  const devices = await probeGpus(gpuCommandsOf(config.machine.gpu_commands));
  return { cpus, gpus: devices.length, gpuVendor: devices[0]?.vendor ?? 'nvidia' };
}
