import { ok } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { METRICS_DEFAULT_POINTS, METRICS_MAX_POINTS, METRICS_WINDOW_BYTES, ReadTaskMetricsInput, TaskMetricsChunk } from '../../../schemas/task-metrics.js';
import type { Tasks } from '../tasks.js';

/** read_task_metrics: the metric series a Task reported, read by cursor (beyond the spec). */
export function metricsJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'read_task_metrics',
      output: TaskMetricsChunk,
      description:
        'Reads the metric points a Task reported (ctx.metric, taskyard_task.metric, or a protocol metric line), by series name, ' +
        `in the order reported. Start with cursor 0 and continue with the answer's cursor; has_more says more points are there now. ` +
        `A call reads at most ${METRICS_WINDOW_BYTES / 1024} KiB of the file and max_points points (default ${METRICS_DEFAULT_POINTS}, at most ${METRICS_MAX_POINTS}). ` +
        'A Task without metrics answers no series; reset is true when the cursor lay past the end (the Task ran again). ' +
        'Over /events it follows the Task live: each window of points as a `metrics` event (the fields of this answer) as they are reported, ' +
        'until the Task has ended and every point was sent; the result then carries only the cursor.',
      input: ReadTaskMetricsInput,
      annotations: READ_ONLY,
      run: async ({ task_id, cursor = 0, max_points = METRICS_DEFAULT_POINTS, poll_interval = 0.5 }, ctx) =>
        ok(ctx.streaming ? await rt.followMetrics(task_id, cursor, max_points, poll_interval * 1000, ctx) : await rt.readMetrics(task_id, cursor, max_points)),
    }),
  ];
}
