import { join } from 'node:path';
import { TASK_REPORT_FILES } from '../../core/task-record/record-files.js';
import { KeyError } from '../../core/errors.js';
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
