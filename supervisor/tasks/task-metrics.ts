import { join } from 'node:path';
import { isTerminal, TASK_REPORT_FILES } from '../../core/task-record/record-files.js';
import { KeyError } from '../../core/errors.js';
import type { JobContext } from '../../core/job.js';
import { changeFeedOf, FollowerWait } from './follow/change-feed.js';
import { METRICS_WINDOW_BYTES, type TaskMetricsChunk } from '../../schemas/task-metrics.js';
import { readMetricsWindow } from './follow/metrics-reader.js';
import type { TaskIndex } from './records/task-index.js';

/**
 * `read_task_metrics`: the metric points a Task reported (its `metrics.jsonl`) after `cursor`, one
 * bounded window per call (follow/metrics-reader.ts). An unknown Task is a KeyError, as for every
 * Task Job; a Task that reported no metric answers no series.
 */
export function readTaskMetrics(index: TaskIndex, id: string, cursor: number, maxPoints: number): Promise<TaskMetricsChunk> {
  const record = index.get(id);
  if (!record) throw new KeyError(`Unknown task ${id}`);
  return readMetricsWindow(join(record.dir, TASK_REPORT_FILES.metrics), cursor, maxPoints, METRICS_WINDOW_BYTES);
}

/**
 * `read_task_metrics` over `/events`: every window after `cursor` as a `metrics` event, then
 * again as the Task reports more (woken by its changes, at least every `pollMs`), until it has
 * ended and everything it reported was sent. Answers the cursor after the last point sent (its
 * series are in the events). The state is read before the file: a Task seen ended has flushed
 * every point it will ever write.
 */
export async function followTaskMetrics(index: TaskIndex, id: string, cursor: number, maxPoints: number, pollMs: number, ctx: JobContext): Promise<TaskMetricsChunk> {
  const feed = changeFeedOf(index);
  const wait = new FollowerWait(ctx.signal);
  let reset = false;
  try {
    for (;;) {
      const status = index.get(id)?.status;
      if (!status) throw new KeyError(`Unknown task ${id}`);
      const ended = isTerminal(status.state);
      for (;;) {
        const chunk = await readTaskMetrics(index, id, cursor, maxPoints);
        reset ||= chunk.reset;
        if (Object.keys(chunk.series).length > 0 || chunk.reset) await ctx.emit({ kind: 'metrics', ...chunk });
        cursor = chunk.cursor;
        if (!chunk.has_more || ctx.signal.aborted) break;
      }
      if (ended) return { series: {}, cursor, has_more: false, reset };
      await wait.until(feed.next(id, pollMs));
    }
  } finally {
    wait.close();
  }
}
