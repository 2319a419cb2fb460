import { lstat } from 'node:fs/promises';
import { readJsonObject } from '../../common/json-file.js';
import { join } from 'node:path';
import { TaskMetadata, TaskStatus } from '../../../schemas/tasks.js';
import { check } from '../../../schemas/validator.js';
import { TASK_FILES } from '../../../core/task-record/record-files.js';
import { boundSteps } from '../../../core/task-record/step-limits.js';

/**
 * Tolerant readers of task records (spec: TaskStatus). Invalid JSON, a record whose task_id or
 * task_type differs from its directory, or a directory that is a symlink makes the record look
 * missing (null); nothing is repaired.
 */

/** True when `dir` is a real directory (not a symlink), so reading inside it stays in the workspace. */
export async function isSafeDir(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Reads `status.json`, reading the historical `execution_id` as `run_id`, defaults filled, its
 * steps held to the limits a runner writes them with (step-limits.ts): a status.json written by
 * hand or by a hostile Task cannot make the index or a follower large.
 */
export async function readStatus(dir: string, taskId: string, taskType: string): Promise<TaskStatus | null> {
  const raw = await readJsonObject(join(dir, TASK_FILES.status));
  if (!raw) return null;
  if (raw['run_id'] === undefined && raw['execution_id'] !== undefined) raw['run_id'] = raw['execution_id'];
  delete raw['execution_id'];
  const parsed = check(TaskStatus, raw, { defaults: true });
  if (!parsed.ok || parsed.value.task_id !== taskId || parsed.value.task_type !== taskType) return null;
  const status = parsed.value as TaskStatus;
  status.steps = boundSteps(status.steps);
  return status;
}

/** Reads `metadata.json`; null when absent, invalid or about another Task. */
export async function readMetadata(dir: string, taskId: string): Promise<TaskMetadata | null> {
  const raw = await readJsonObject(join(dir, TASK_FILES.metadata));
  if (!raw) return null;
  const parsed = check(TaskMetadata, raw);
  return parsed.ok && parsed.value.task_id === taskId ? parsed.value : null;
}
