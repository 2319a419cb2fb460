import { availableParallelism, cpus } from 'node:os';
import type { GpuDevice, GpuLease, MachineInfo } from '../../schemas/machine.js';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../../core/build-info.js';
import { CpuSampler, readPhysicalCores } from './cpu-usage.js';
import { readGitInfo, type GitInfo } from './git-info.js';
import { sharedGpuProbe } from './gpu-probe.js';
import { readMemory } from './memory-info.js';

/** Builds `machine_status` answers; created once per service so start-time facts are read once. */
export interface MachineStatusSource {
  read(): Promise<MachineInfo>;
  stop(): void;
}

/** The package's own checkout, asked of git once per process (a test process starts many services). */
let packageGit: Promise<GitInfo> | undefined;

/**
 * Reads what never changes while the service runs (build info, core counts) once at start and
 * starts the background CPU sampler; each request then reads memory, GPUs and the Tasks' GPU
 * leases (`gpuLeases`, from the task runtime) fresh.
 */
export async function startMachineStatus(probeGpus: () => Promise<GpuDevice[]> = sharedGpuProbe(), gpuLeases: () => GpuLease[] = () => []): Promise<MachineStatusSource> {
  const [git, physicalCores, sampler] = await Promise.all([(packageGit ??= readGitInfo(PACKAGE_ROOT)), readPhysicalCores(), CpuSampler.start()]);
  const build = Object.freeze({ version: PACKAGE_VERSION, ...git });
  const totalCores = cpus().length || availableParallelism() || null;
  return {
    async read() {
      const [usage, memory, gpus] = await Promise.all([sampler.usage(), readMemory(), probeGpus()]);
      return {
        axonx: { ...build },
        cpu: { total_cores: totalCores, physical_cores: physicalCores, usage_percent: usage },
        memory,
        gpus,
        gpu_leases: gpuLeases(),
      };
    },
    stop: () => sampler.stop(),
  };
}
