import { isTerminal } from '../../core/task-record/record-files.js';
import { readStatus } from '../tasks/records/records.js';
import type { TaskGuard } from './apply-snapshot.js';

/** What snapshots need of the Tasks facade (declared here: they never reach into it). */
export interface GuardedTasks {
  /** Holds Tasks against submit and delete (a FileExistsError when one is held); returns the release. */
  hold(ids: readonly string[]): () => void;
  /** Whether the service manages the Task's runner or its record on disk is not terminal. */
  isActive(id: string): Promise<boolean>;
  /** Reads the Tasks' records from disk again. */
  reloadRecords(ids: readonly string[]): Promise<void>;
}

/**
 * The task system's answers for `sync_tasks`: a Task is active while this service manages its
 * runner or its indexed record is not terminal; `hold` uses the same claims as
 * submit and delete, so none of them can touch a directory while a snapshot replaces it.
 */
export function taskGuardOf(tasks: GuardedTasks): TaskGuard {
  return {
    hold: (taskIds) => tasks.hold(taskIds),
    isActive: (taskId) => tasks.isActive(taskId),
    async problemOf(dir, taskId, taskType) {
      const status = await readStatus(dir, taskId, taskType);
      if (!status) return 'status.json is missing or is not a valid TaskStatus of this Task';
      if (!isTerminal(status.state)) return `status is ${status.state}; only finished Tasks can be applied`;
      return null;
    },
    refresh: (taskIds) => tasks.reloadRecords(taskIds),
  };
}
