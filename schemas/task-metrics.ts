import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Points one `read_task_metrics` call answers by default, and at most. */
export const METRICS_DEFAULT_POINTS = 10_000;
export const METRICS_MAX_POINTS = 50_000;
/**
 * Bytes of `metrics.jsonl` one call reads at most: the service holds one such window per call,
 * however big the file is (a Task may keep a million points, ~80 MB).
 */
export const METRICS_WINDOW_BYTES = 1024 * 1024;

/** Input of `read_task_metrics`. */
export const ReadTaskMetricsInput = Type.Object(
  {
    task_id: Type.String({ minLength: 1 }),
    cursor: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Byte offset into metrics.jsonl: 0 from the start, then the cursor of the last answer' })),
    max_points: Type.Optional(Type.Integer({ minimum: 1, maximum: METRICS_MAX_POINTS, default: METRICS_DEFAULT_POINTS, description: 'Most points to answer' })),
    poll_interval: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 0.5, description: 'Over /events: seconds between looks for new points at most (changes of the Task wake it sooner)' })),
  },
  { additionalProperties: false },
);
export type ReadTaskMetricsInput = Static<typeof ReadTaskMetricsInput>;

/** One point of a metric series, as the Task reported it (a non-finite value is null). */
export const MetricPoint = Type.Object({
  value: Type.Union([Type.Number(), Type.Null()]),
  step: Type.Optional(Type.Integer()),
  timestamp: Type.String(),
});
export type MetricPoint = Static<typeof MetricPoint>;

/** Answer of `read_task_metrics`: the points of one window of the file, by series name, in file order. */
export const TaskMetricsChunk = Type.Object({
  series: Type.Record(Type.String(), Type.Array(MetricPoint), { description: 'Metric name → its points in this window, in the order they were reported' }),
  cursor: Type.Integer({ minimum: 0, description: 'Pass as cursor to read the points after these' }),
  has_more: Type.Boolean({ description: 'More complete points follow the cursor now: read again at once' }),
  reset: Type.Boolean({ description: 'The cursor lay past the end of the file (the Task ran again): this answer starts from 0' }),
});
export type TaskMetricsChunk = Static<typeof TaskMetricsChunk>;
