import { readJsonObject } from '../../common/json-file.js';
import { writeJsonAtomic } from '../../../core/task-record/record-files.js';
import type { Lease } from './resource-pool.js';

/** One run's lease as kept on disk. */
export interface SavedLease {
  readonly run_id: string;
  readonly task_id: string;
  readonly cpus: number;
  readonly gpus: readonly number[];
}

/**
 * The local executor's leases in the service's private state (`.taskyard/leases.json`), so a
 * restarted service that adopts a live run gives it back the GPUs and CPUs it holds instead of
 * handing them to the next run. Written only when a run holding something starts or ends; writes
 * are queued one after another, so the file always ends as the last state.
 */
export class LeaseFile {
  readonly #path: string;
  #writing: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.#path = path;
  }

  /** The saved leases by run_id (none when the file is missing or unreadable). */
  async read(): Promise<Map<string, Lease>> {
    const saved = (await readJsonObject(this.#path))?.['leases'];
    const leases = new Map<string, Lease>();
    for (const entry of Array.isArray(saved) ? (saved as SavedLease[]) : []) {
      const gpus = Array.isArray(entry?.gpus) ? entry.gpus.filter((i) => Number.isInteger(i) && i >= 0) : [];
      if (typeof entry?.run_id === 'string') leases.set(entry.run_id, { cpus: Number.isInteger(entry.cpus) ? entry.cpus : 0, gpus });
    }
    return leases;
  }

  save(leases: readonly SavedLease[]): void {
    this.#writing = this.#writing
      .then(() => writeJsonAtomic(this.#path, { leases }, { durable: false }))
      .catch((err: unknown) => console.error(`taskyard: saving the GPU and CPU leases failed (${(err as Error).message}); a restart may not know them`));
  }
}
