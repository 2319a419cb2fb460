import type { GpuLease } from '../../../schemas/machine.js';
import type { TaskResources } from '../../../schemas/tasks.js';
import { BusinessError } from '../../../core/errors.js';

/** What the local executor may hand out: cores and GPUs of this machine. */
export interface Capacity {
  readonly cpus: number;
  readonly gpus: number;
  /** Which variable hides the other GPUs from a Task. */
  readonly gpuVendor: 'nvidia' | 'amd';
}

/** What one admitted run holds until its runner is gone. */
export interface Lease {
  readonly cpus: number;
  /** GPU indices, ascending. */
  readonly gpus: readonly number[];
}

const NO_LEASE: Lease = Object.freeze({ cpus: 0, gpus: Object.freeze([]) });

/** Who holds a GPU, as `machine_status` shows it. */
interface Holder {
  readonly taskId: string;
  readonly runId: string;
}

/**
 * The local executor's CPUs and GPUs. A run asking for nothing takes nothing (so the default stays
 * "unlimited" as before); a run asking for CPUs or GPUs is admitted only when they are free. GPUs
 * are leased by index, lowest free first.
 */
export class ResourcePool {
  readonly #capacity: Capacity;
  readonly #gpuHolders: Array<Holder | null>;
  #freeCpus: number;

  constructor(capacity: Capacity) {
    this.#capacity = capacity;
    this.#freeCpus = capacity.cpus;
    this.#gpuHolders = Array.from({ length: capacity.gpus }, () => null);
  }

  get capacity(): Capacity {
    return this.#capacity;
  }

  /** Refuses at submit what this machine can never give, naming both numbers. */
  check(task: string, wanted: TaskResources): void {
    const { cpus, gpus } = this.#capacity;
    if ((wanted.gpus ?? 0) > gpus) throw new BusinessError('ValueError', `task ${task} asks for ${wanted.gpus} GPUs but this machine has ${gpus} (machine_status, or config service.gpus)`);
    if ((wanted.cpus ?? 0) > cpus) throw new BusinessError('ValueError', `task ${task} asks for ${wanted.cpus} CPUs but this machine has ${cpus}`);
  }

  /** Leases what `wanted` asks for, or null while it is not free. */
  tryLease(wanted: TaskResources, holder: Holder): Lease | null {
    const cpus = wanted.cpus ?? 0;
    const gpuCount = wanted.gpus ?? 0;
    if (cpus === 0 && gpuCount === 0) return NO_LEASE;
    if (cpus > this.#freeCpus) return null;
    const free = this.#gpuHolders.flatMap((h, index) => (h === null ? [index] : []));
    if (gpuCount > free.length) return null;
    const gpus = free.slice(0, gpuCount);
    for (const index of gpus) this.#gpuHolders[index] = holder;
    this.#freeCpus -= cpus;
    return { cpus, gpus };
  }

  /** Takes back what an adopted run held before a restart (what is out of range or taken is skipped). */
  claim(saved: Lease, holder: Holder): Lease {
    const gpus = saved.gpus.filter((index) => index < this.#gpuHolders.length && this.#gpuHolders[index] === null);
    for (const index of gpus) this.#gpuHolders[index] = holder;
    const cpus = Math.min(saved.cpus, this.#freeCpus);
    this.#freeCpus -= cpus;
    return { cpus, gpus };
  }

  release(lease: Lease): void {
    this.#freeCpus += lease.cpus;
    for (const index of lease.gpus) this.#gpuHolders[index] = null;
  }

  /** The Task's view of the GPUs: only its own (none for a run that leased none). */
  environmentOf(lease: Lease): Record<string, string> {
    if (this.#capacity.gpus === 0) return {};
    const name = this.#capacity.gpuVendor === 'amd' ? 'HIP_VISIBLE_DEVICES' : 'CUDA_VISIBLE_DEVICES';
    return { [name]: lease.gpus.join(',') };
  }

  /** Current GPU leases, by index. */
  gpuLeases(): GpuLease[] {
    return this.#gpuHolders.flatMap((h, index) => (h ? [{ index, task_id: h.taskId, run_id: h.runId }] : []));
  }
}
