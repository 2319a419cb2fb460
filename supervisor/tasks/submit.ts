import { randomUUID } from 'node:crypto';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';
import { check, describeIssues } from '../../schemas/validator.js';
import { isTerminal, nowIso, TASK_FILES } from '../../core/task-record/record-files.js';
import { BusinessError, FileExistsError } from '../../core/errors.js';
import { createRunDir } from './records/run-dir.js';
import { TASK_NAME } from '../../core/task-record/id-rules.js';
import { anonymousName, formatTaskId, normalizeSourceTasks, relativeTaskPath, taskDirOf } from './records/task-ids.js';
import type { Tasks } from './tasks.js';

/**
 * The instance name, checked before the schema: its schema is an anyOf (string or null), whose
 * validator message repeats each branch; a person needs the rule once, with what they sent.
 */
function checkTaskName(value: unknown): void {
  if (value === undefined || value === null || value === '' || (typeof value === 'string' && TASK_NAME.test(value))) return;
  throw new BusinessError('ValidationError', `task_name must be 1-32 letters, digits or hyphens; got ${JSON.stringify(value)}`);
}

/** Creates the run's directory; a failure of the file system is a business failure saying nothing was written. */
function createRunDirOrExplain(rt: Tasks, dir: string, status: TaskStatus): { durable: Promise<void> } {
  try {
    return createRunDir(dir, status, rt.spareDirs);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    if (err instanceof BusinessError || !code) throw err;
    throw new BusinessError('OSError', `the Task could not be created: ${message}; nothing was written`);
  }
}

/**
 * `submit`: checks the Task and its inputs before anything is written, names the instance,
 * refuses to replace an active Task, creates the run's directory whole (or nothing) and hands the
 * run to its owner.
 */
export async function submitTask(rt: Tasks, task: string, inputs: Record<string, unknown>): Promise<TaskHandle> {
  const entry = rt.catalog.require(task);
  const { definition } = entry;
  checkTaskName(inputs['task_name']);
  rt.checkResources(definition.name, definition.resources);
  // Catalog schemas are plain JSON Schema; ajv needs nothing TypeBox-specific.
  const parsed = check(definition.input_schema, inputs, { defaults: true });
  if (!parsed.ok) throw new BusinessError('ValidationError', `invalid input for task ${task}: ${describeIssues(parsed.issues)}`);
  const config = parsed.value as Record<string, unknown> & { task_name: string | null; source_tasks: string };
  config.source_tasks = normalizeSourceTasks(config.source_tasks).join(',');
  const fixedName = typeof config.task_name === 'string' && config.task_name !== '';
  config.task_name = fixedName ? config.task_name : anonymousName();

  const parts = { type: definition.task_type, registration: definition.name, name: config.task_name! };
  const id = formatTaskId(parts);
  const existing = rt.index.get(id)?.status;
  const release = rt.runs.get(id) || (existing && !isTerminal(existing.state)) ? null : rt.index.claim([id]);
  if (!release) throw new FileExistsError(`Task ${id} is still active; a fixed task_name may only replace a finished Task`);
  try {
    const dir = taskDirOf(rt.workspace, id, parts);
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
    const { durable } = createRunDirOrExplain(rt, dir, status);
    rt.runs.submit({ id, parts, dir, runId: status.run_id, registration: definition.name, module: entry.module, resources: definition.resources }, status);
    // The run starts while its record is flushed; the submit is answered once it is on disk.
    await durable;
    return { task_id: id, run_id: status.run_id, task: definition.name };
  } finally {
    release();
    // After the run's start and the record's flush: making spares takes the cores they need.
    rt.spareDirs.refill();
  }
}
