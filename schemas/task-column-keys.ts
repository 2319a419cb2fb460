/**
 * Names and bounds of `read_task_columns`, free of TypeBox so that the console bundle can import
 * them (schemas/task-columns.ts holds the schemas).
 */

/** Bounds of `read_task_columns`: one call serves a screenful of rows, or one column of a whole table for a sort. */
export const TASK_COLUMNS_LIMITS = Object.freeze({
  /** Task IDs in one call. */
  tasks: 1000,
  /** Columns in one call. */
  columns: 20,
  /** Longest text answered for a value (a longer string, or an object's JSON, is cut here). */
  text: 200,
  /** Bytes of the end of a Task's metrics.jsonl searched for the last value of each metric. */
  metricTailBytes: 256 * 1024,
});

/** Where a column's value comes from: a Task's input (`config`), its output (`result`), or the last point of a metric series. */
export const TASK_COLUMN_KINDS = ['input', 'output', 'metric'] as const;
export type TaskColumnKind = (typeof TASK_COLUMN_KINDS)[number];

/** The key of a column in an answer's values: `<kind>:<name>`. */
export const columnKey = (c: { kind: string; name: string }): string => `${c.kind}:${c.name}`;
