import { FileExistsError } from '../../core/errors.js';
import { isTerminal } from '../../core/task-record/record-files.js';
import { readStatus } from '../tasks/records/records.js';
import type { Tasks } from '../tasks/tasks.js';
import type { TaskGuard } from './apply-snapshot.js';

/**
 * The task system's answers for `sync_tasks`: a Task is active while this service manages its
 * runner or its indexed record is not terminal; `hold` uses the same claims as
 * submit and delete, so none of them can touch a directory while a snapshot replaces it.
 */
export function taskGuardOf(rt: Tasks): TaskGuard {
  return {
    hold(taskIds) {
      const release = rt.index.claim(taskIds);
      if (!release) throw new FileExistsError(`Task ${taskIds.find((id) => rt.index.isClaimed(id))} is being submitted or deleted right now`);
      return release;
    },
    async isActive(taskId) {
      if (rt.runs.get(taskId)) return true;
      const record = await rt.index.load(taskId);
      return record?.status ? !isTerminal(record.status.state) : false;
    },
    async problemOf(dir, taskId, taskType) {
      const status = await readStatus(dir, taskId, taskType);
      if (!status) return 'status.json is missing or is not a valid TaskStatus of this Task';
      if (!isTerminal(status.state)) return `status is ${status.state}; only finished Tasks can be applied`;
      return null;
    },
    async refresh(taskIds) {
      for (const id of taskIds) await rt.index.load(id);
    },
  };
}
