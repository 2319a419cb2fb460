import { lstat, mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskStatus } from '../../../schemas/tasks.js';
import type { RunRetry, TaskRunEntry } from '../../../schemas/task-runs.js';
import { TASK_FILES, TASK_REPORT_FILES, writeJsonAtomic } from '../../../core/task-record/record-files.js';
import { readJsonObject } from '../../common/json-file.js';

/**
 * The runs of one submission. A retried attempt's records move under `runs/<run_id>/` in the
 * Task directory (its terminal status, log, progress and metrics, and `attempt.json` saying why
 * it was tried again); the Task's own files (outputs, checkpoints) stay where the next attempt
 * finds them. A new submit replaces the directory, and the history with it.
 */
export const RUNS_DIR = 'runs';
const ATTEMPT_FILE = 'attempt.json';
/** The records an attempt owns: moved aside whole when it is retried. */
const ATTEMPT_RECORDS = [TASK_FILES.log, TASK_FILES.events, TASK_REPORT_FILES.metrics];
/** Run IDs the service makes (hex UUIDs); anything else a caller names is never a path. */
const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** `attempt.json`: which attempt this was and why the next one ran. */
export interface AttemptNote extends RunRetry {
  readonly attempt: number;
}

/** Where an earlier run's records are, relative to the Task directory. */
export function attemptDir(runId: string): string {
  return join(RUNS_DIR, runId);
}

/** Whether `path` is a directory itself, not a link to one (Task code writes in its directory and may plant links). */
async function isRealDir(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null))?.isDirectory() ?? false;
}

/** Makes the directory `path`, or finds it made; a link or a file there is refused, never followed. */
async function ownDir(path: string, shown: string): Promise<void> {
  await mkdir(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  if (!(await isRealDir(path))) throw new Error(`${shown} in the Task directory is not a directory of its own (a link or a file the Task made)`);
}

/**
 * Moves the failed attempt's records aside and writes the next attempt's queued record, in an
 * order a crash cannot make lose a record: the attempt's terminal status is written under
 * `runs/` first, `status.json` is replaced last (atomically). `failed.log_path` is rewritten to
 * where its log now is.
 */
export async function archiveAttempt(dir: string, failed: TaskStatus, note: AttemptNote, next: TaskStatus): Promise<void> {
  const into = join(dir, attemptDir(failed.run_id));
  // The Task made what is in its directory: the records go nowhere a link of its leads.
  await ownDir(join(dir, RUNS_DIR), RUNS_DIR);
  await ownDir(into, attemptDir(failed.run_id));
  const logPath = failed.log_path ? `${failed.log_path.slice(0, -TASK_FILES.log.length)}${attemptDir(failed.run_id)}/${TASK_FILES.log}` : '';
  await writeJsonAtomic(join(into, TASK_FILES.status), { ...failed, log_path: logPath });
  for (const name of ATTEMPT_RECORDS) {
    await rename(join(dir, name), join(into, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  await writeJsonAtomic(join(into, ATTEMPT_FILE), note);
  await writeJsonAtomic(join(dir, TASK_FILES.status), next);
}

/** The earlier attempts kept in `dir`, oldest first (a `runs/` entry without a readable record is not one). */
export async function earlierAttempts(dir: string): Promise<Array<{ status: TaskStatus; note: AttemptNote }>> {
  // A `runs` the Task made a link is not its history (it would list whatever the link leads to).
  const names = (await isRealDir(join(dir, RUNS_DIR))) ? await readdir(join(dir, RUNS_DIR)).catch(() => [] as string[]) : [];
  const found: Array<{ status: TaskStatus; note: AttemptNote }> = [];
  for (const name of names.filter((n) => RUN_ID.test(n))) {
    if (!(await isRealDir(join(dir, RUNS_DIR, name)))) continue;
    const [status, note] = await Promise.all([readJsonObject(join(dir, RUNS_DIR, name, TASK_FILES.status)), readJsonObject(join(dir, RUNS_DIR, name, ATTEMPT_FILE))]);
    if (status?.['run_id'] === name && typeof note?.['attempt'] === 'number') found.push({ status: status as unknown as TaskStatus, note: note as unknown as AttemptNote });
  }
  return found.sort((a, b) => a.note.attempt - b.note.attempt);
}

/** The run IDs of the earlier attempts kept in each directory, by Task ID. */
export async function earlierRunIds(records: readonly { readonly id: string; readonly dir: string }[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const { id, dir } of records) found.set(id, (await earlierAttempts(dir)).map((a) => a.status.run_id));
  return found;
}

/** Whether `runId` is a retried attempt of the submission in `dir` (a wait on it follows the retries). */
export async function isEarlierAttempt(dir: string, runId: string): Promise<boolean> {
  if (!RUN_ID.test(runId) || !(await isRealDir(join(dir, RUNS_DIR))) || !(await isRealDir(join(dir, attemptDir(runId))))) return false;
  const note = await readJsonObject(join(dir, attemptDir(runId), ATTEMPT_FILE));
  return typeof note?.['attempt'] === 'number';
}

/** One run as `get_task_runs` shows it. */
function entryOf(status: TaskStatus, attempt: number, statusPath: string, retry: RunRetry | null): TaskRunEntry {
  const { run_id, state, started_at, finished_at, exit_code, error, log_path } = status;
  return { run_id, attempt, state, started_at, finished_at, exit_code, error, log_path, status_path: statusPath, retry };
}

/** Every run of the submission in `dir`: the earlier attempts, then `current`. `base`: the Task directory, workspace-relative. */
export async function runHistory(dir: string, base: string, current: TaskStatus): Promise<TaskRunEntry[]> {
  const earlier = (await earlierAttempts(dir)).filter((a) => a.status.run_id !== current.run_id);
  const runs = earlier.map(({ status, note }) => {
    const { attempt, cause, next_run_id, delay_s, retried_at } = note;
    return entryOf(status, attempt, `${base}/${attemptDir(status.run_id)}/${TASK_FILES.status}`, { cause, next_run_id, delay_s, retried_at });
  });
  runs.push(entryOf(current, (earlier.at(-1)?.note.attempt ?? 0) + 1, `${base}/${TASK_FILES.status}`, null));
  return runs;
}
