import { ok } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { GetTaskRunsInput, TaskRuns } from '../../../schemas/task-runs.js';
import type { Tasks } from '../tasks.js';

/** get_task_runs: the attempts of a Task's submission (beyond the spec). */
export function historyJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'get_task_runs',
      output: TaskRuns,
      description:
        'Lists the runs of a Task since it was submitted, oldest first; the last is the current run (its TaskStatus run_id). ' +
        'A Task whose definition has a retry policy (retries: max, on [lost, node_fail, timeout], exit_codes, backoff_s) keeps its task_id ' +
        'when a failed run is tried again; each attempt has its own run_id, and an earlier one keeps its status, exit code, error and log ' +
        '(log_path, readable with preview_file) and says why it was retried. wait_task with an earlier run_id follows the retries to the final run.',
      input: GetTaskRunsInput,
      annotations: READ_ONLY,
      run: async ({ task_id }) => ok(await rt.runHistory(task_id)),
    }),
  ];
}
