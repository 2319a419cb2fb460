import { ok } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { ReadTaskColumnsInput, TASK_COLUMNS_LIMITS, TaskColumnValues } from '../../../schemas/task-columns.js';
import type { Tasks } from '../tasks.js';

/** read_task_columns: chosen values of many Tasks in one call, for tables (beyond the spec). */
export function columnJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'read_task_columns',
      output: TaskColumnValues,
      description:
        `Reads chosen values of up to ${TASK_COLUMNS_LIMITS.tasks} Tasks in one call, for a table of Tasks: for each column, an input field (kind input, from config), ` +
        'an output field (kind output, from result) or the final value of a metric (kind metric: the last point of that series). ' +
        'Answers values by Task ID, then by `<kind>:<name>`; a value the Task does not have is left out. Numbers, booleans and null come as they are; ' +
        `text, and any object or array as its JSON text, is cut at ${TASK_COLUMNS_LIMITS.text} characters. A final metric value is searched in the last ` +
        `${TASK_COLUMNS_LIMITS.metricTailBytes / 1024} KiB of the Task's metrics (a series last reported before them has none). IDs without a Task are listed in unknown.`,
      input: ReadTaskColumnsInput,
      annotations: READ_ONLY,
      run: async (args) => ok(await rt.columns(args)),
    }),
  ];
}
