import type { TaskDefinition, TaskHandle, TaskResources, TaskStatus } from '../../schemas/tasks.js';
import { check, describeIssues } from '../../schemas/validator.js';
import { isTerminal, nowIso, TASK_FILES } from '../../core/task-record/record-files.js';
import { BusinessError, FileExistsError } from '../../core/errors.js';
import { createRunDir } from './records/run-dir.js';
import { TASK_NAME } from '../../core/task-record/id-rules.js';
import { anonymousName, formatTaskId, normalizeSourceTasks, relativeTaskPath, taskDirOf } from './records/task-ids.js';
import type { DefinitionCatalog } from './definitions.js';
import type { SpareRunDirs } from './records/spare-run-dirs.js';
import type { Submitters } from './records/submitters.js';
import type { TaskIndex } from './records/task-index.js';
import { newRunId, type RunTable } from './runs/run-table.js';
import type { ResultCache } from './cache/result-cache.js';

/** What a submit uses of the facade's parts (one object, made once: a submit allocates no view of them). */
export interface SubmitParts {
  readonly workspace: string;
  readonly catalog: Pick<DefinitionCatalog, 'require'>;
  readonly index: Pick<TaskIndex, 'get' | 'claim' | 'setStatus'>;
  readonly runs: Pick<RunTable, 'get' | 'submit'>;
  readonly spareDirs: SpareRunDirs;
  readonly submitters: Pick<Submitters, 'record'>;
  readonly cache: Pick<ResultCache, 'keyOf' | 'answer' | 'expect'>;
  /** Refuses what the engine can never give (see Tasks). */
  checkResources(task: string, resources: TaskResources): void;
}

/**
 * The instance name, checked before the schema: its schema is an anyOf (string or null), whose
 * validator message repeats each branch; a person needs the rule once, with what they sent.
 */
function checkTaskName(value: unknown): void {
  if (value === undefined || value === null || value === '' || (typeof value === 'string' && TASK_NAME.test(value))) return;
  throw new BusinessError('ValidationError', `task_name must be 1-32 letters, digits or hyphens; got ${JSON.stringify(value)}`);
}

/** Creates the run's directory; a failure of the file system is a business failure saying nothing was written. */
function createRunDirOrExplain(spareDirs: SpareRunDirs, dir: string, status: TaskStatus): { durable: Promise<void> } {
  try {
    return createRunDir(dir, status, spareDirs);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    if (err instanceof BusinessError || !code) throw err;
    throw new BusinessError('OSError', `the Task could not be created: ${message}; nothing was written`);
  }
}

/**
 * What this run holds: the definition's resources (config overrides included), each field
 * overridden by the run's own `resources` input where the Task declares one (the `command` Task
 * does: a command's needs vary from run to run). The input was checked by the Task's schema.
 */
export function runResources(definition: TaskDefinition, config: Record<string, unknown>): TaskResources {
  const declared = (definition.input_schema as { properties?: Record<string, unknown> }).properties ?? {};
  const asked = config['resources'];
  if (!('resources' in declared) || typeof asked !== 'object' || asked === null) return definition.resources;
  return { ...definition.resources, ...(asked as TaskResources) };
}

/**
 * `submit`: checks the Task and its inputs before anything is written, names the instance,
 * refuses to replace an active Task, creates the run's directory whole (or nothing) and hands the
 * run to its owner. `submitter`: the name of the caller's token, noted once the record is on disk.
 * A cached Task (`cache: true`) whose key the result cache answers becomes a succeeded Task at
 * once, without a run, unless `noCache`; a run of it answers its key once it succeeds.
 */
export async function submitTask(taskParts: SubmitParts, task: string, inputs: Record<string, unknown>, submitter: string | undefined, noCache = false): Promise<TaskHandle> {
  const entry = taskParts.catalog.require(task);
  const { definition } = entry;
  checkTaskName(inputs['task_name']);
  // Catalog schemas are plain JSON Schema; ajv needs nothing TypeBox-specific.
  const parsed = check(definition.input_schema, inputs, { defaults: true });
  if (!parsed.ok) throw new BusinessError('ValidationError', `invalid input for task ${task}: ${describeIssues(parsed.issues)}`);
  const config = parsed.value as Record<string, unknown> & { task_name: string | null; source_tasks: string };
  const resources = runResources(definition, config);
  taskParts.checkResources(definition.name, resources);
  const sources = normalizeSourceTasks(config.source_tasks);
  config.source_tasks = sources.join(',');
  // Only a Task that opted in pays for a key (its sources' metadata are read).
  const cacheKey = definition.cache === true ? await taskParts.cache.keyOf(definition, config, sources) : null;
  const fixedName = typeof config.task_name === 'string' && config.task_name !== '';
  config.task_name = fixedName ? config.task_name : anonymousName();

  const parts = { type: definition.task_type, registration: definition.name, name: config.task_name! };
  const id = formatTaskId(parts);
  const existing = taskParts.index.get(id)?.status;
  const release = taskParts.runs.get(id) || (existing && !isTerminal(existing.state)) ? null : taskParts.index.claim([id]);
  if (!release) throw new FileExistsError(`Task ${id} is still active; a fixed task_name may only replace a finished Task`);
  try {
    const dir = taskDirOf(taskParts.workspace, id, parts);
    const status: TaskStatus = {
      task_id: id,
      run_id: newRunId(),
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
    // A hit is a Task that ended already (its directory is on disk when this answers): no run.
    const hit = cacheKey !== null && !noCache && (await taskParts.cache.answer(cacheKey, { id, parts, dir, status }));
    if (!hit) {
      const { durable } = createRunDirOrExplain(taskParts.spareDirs, dir, status);
      if (cacheKey !== null) taskParts.cache.expect(id, cacheKey);
      taskParts.runs.submit({ id, parts, dir, runId: status.run_id, registration: definition.name, module: entry.module, resources, attempt: 1, earlier: [] }, status);
      // The run starts while its record is flushed; the submit is answered once it is on disk.
      await durable;
    }
    if (submitter !== undefined) taskParts.submitters.record(id, status.run_id, submitter);
    return { task_id: id, run_id: status.run_id, task: definition.name };
  } finally {
    release();
    // After the run's start and the record's flush: making spares takes the cores they need.
    taskParts.spareDirs.refill();
  }
}
