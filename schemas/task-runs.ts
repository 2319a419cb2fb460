import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { TaskStateName } from './tasks.js';

/** Input of `get_task_runs`. */
export const GetTaskRunsInput = Type.Object({ task_id: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export type GetTaskRunsInput = Static<typeof GetTaskRunsInput>;

/** Why an attempt was tried again, and when the next one was due. */
export const RunRetry = Type.Object({
  cause: Type.Union([Type.Literal('lost'), Type.Literal('node_fail'), Type.Literal('timeout'), Type.Literal('exit_code')], { description: 'Which rule of the retry policy matched' }),
  next_run_id: Type.String(),
  delay_s: Type.Number({ description: 'Seconds the next attempt waited before it was queued' }),
  retried_at: Type.String(),
});
export type RunRetry = Static<typeof RunRetry>;

/** One run (attempt) of a Task, as its record shows it. */
export const TaskRunEntry = Type.Object({
  run_id: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  state: TaskStateName,
  started_at: Type.Union([Type.String(), Type.Null()]),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  exit_code: Type.Integer(),
  error: Type.String(),
  /** Workspace-relative: preview_file reads an earlier run's log. */
  log_path: Type.String(),
  /** Workspace-relative status record of the run (an earlier one's is kept under `runs/<run_id>/`). */
  status_path: Type.String(),
  retry: Type.Union([RunRetry, Type.Null()], { description: 'Set on a run that was tried again' }),
});
export type TaskRunEntry = Static<typeof TaskRunEntry>;

/** Answer of `get_task_runs`: every run of the current submission, oldest first; the last is the current run. */
export const TaskRuns = Type.Object({ task_id: Type.String(), runs: Type.Array(TaskRunEntry) });
export type TaskRuns = Static<typeof TaskRuns>;
