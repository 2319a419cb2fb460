/**
 * How much of a Task's metrics its `metrics.jsonl` keeps, whoever wrote it: the runner stops
 * appending at these limits, and readers hold no more than a window of it at a time. At ~80 bytes
 * a point, the file of a Task stays under ~100 MB. Shared by the task runner (child) and the
 * supervisor: no imports.
 */

/** Most points one Task records; later ones are dropped (the log says so once). */
export const MAX_METRIC_POINTS = 1_000_000;
/** Most distinct metric names one Task records. */
export const MAX_METRIC_SERIES = 1000;
/** Longest metric name, in UTF-16 units. */
export const MAX_METRIC_NAME = 200;
