import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';
import { check, describeIssues } from '../../schemas/validator.js';
import { isTerminal, nowIso, TASK_FILES, writeJsonAtomic } from '../../workers/task-runner/record-files.js';
import { BusinessError, FileExistsError, PermissionError } from '../../core/errors.js';
import { anonymousName, formatTaskId, normalizeSourceTasks, relativeTaskPath, taskDirOf } from './task-ids.js';
import type { TaskRuntime } from './task-runtime.js';

/** Refuses a type directory that is a symlink or a file: writing through it could leave the workspace. */
async function ensureTypeDir(workspace: string, type: string): Promise<void> {
  const dir = join(workspace, type);
  const stat = await lstat(dir).catch(() => undefined);
  if (stat && !stat.isDirectory()) throw new PermissionError(`${type} in the workspace is not a plain directory`);
  if (!stat) await mkdir(dir, { recursive: true });
}

/**
 * `submit`: checks the Task and its inputs before anything is written, names the instance,
 * refuses to replace an active Task, writes the queued record and hands the run to the launcher.
 */
export async function submitTask(rt: TaskRuntime, task: string, inputs: Record<string, unknown>): Promise<TaskHandle> {
  const entry = rt.catalog.require(task);
  const { definition } = entry;
  // Catalog schemas are plain JSON Schema; ajv needs nothing TypeBox-specific.
  const parsed = check(definition.input_schema as unknown as TSchema, inputs, { defaults: true });
  if (!parsed.ok) throw new BusinessError('ValidationError', `invalid input for task ${task}: ${describeIssues(parsed.issues)}`);
  const config = parsed.value as Record<string, unknown> & { task_name: string | null; source_tasks: string };
  config.source_tasks = normalizeSourceTasks(config.source_tasks).join(',');
  const fixedName = typeof config.task_name === 'string' && config.task_name !== '';
  config.task_name = fixedName ? config.task_name : anonymousName();

  const parts = { type: definition.task_type, registration: definition.name, name: config.task_name! };
  const id = formatTaskId(parts);
  const existing = rt.index.get(id);
  const active = existing?.status ? !isTerminal(existing.status.state) : false;
  if (rt.index.claims.has(id) || active || rt.launcher.isManaged(id)) {
    throw new FileExistsError(`Task ${id} is still active; a fixed task_name may only replace a finished Task`);
  }
  rt.index.claims.add(id);
  try {
    const dir = taskDirOf(rt.workspace, id, parts);
    await ensureTypeDir(rt.workspace, parts.type);
    await mkdir(dir).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      // A fixed name replaces a finished Task entirely: its old files must not mix with the new run.
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
    });
    const status: TaskStatus = {
      task_id: id,
      run_id: randomUUID().replaceAll('-', ''),
      task_type: parts.type,
      task_name: definition.name,
      config,
      state: 'queued',
      pid: null,
      created_at: nowIso(),
      started_at: null,
      finished_at: null,
      steps: [],
      result: {},
      error: '',
      exit_code: 0,
      log_path: relativeTaskPath(parts, id, TASK_FILES.log),
    };
    await writeJsonAtomic(join(dir, TASK_FILES.status), status);
    rt.index.setStatus(id, parts, status, false);
    void rt.launch({ id, parts, dir, runId: status.run_id, registration: definition.name, module: entry.module });
    return { task_id: id, run_id: status.run_id, task: definition.name };
  } finally {
    rt.index.claims.delete(id);
  }
}
