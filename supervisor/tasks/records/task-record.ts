import type { TaskState, TaskStatus } from '../../../schemas/tasks.js';
import type { TaskIdParts } from './task-ids.js';

/** A directory's identity and mtime, as compared at start (`fs.Stats` is one). */
export interface Stamp {
  readonly ino: number;
  readonly mtimeMs: number;
}

/** One Task directory as the service knows it. */
export interface TaskRecord {
  readonly id: string;
  readonly parts: TaskIdParts;
  readonly dir: string;
  /** Null for a metadata-only directory. */
  readonly status: TaskStatus | null;
  readonly hasMetadata: boolean;
  /** created_at from status, else from metadata. */
  readonly createdAt: string | null;
  /** Recorded source_tasks (status config, else metadata input_params). */
  readonly sources: readonly string[];
  /** The status's state (readable without parsing a stored status); undefined without a status. */
  readonly state: TaskState | undefined;
  /** Identity and mtime of the directory as read from disk; absent once the service wrote the record. */
  readonly stamp?: Stamp | undefined;
}
