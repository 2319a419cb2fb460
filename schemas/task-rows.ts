/**
 * The TaskStatus fields a table row of Tasks shows (the console's Tasks page asks
 * `query_task_statuses` for these only). Free of TypeBox, so that the console bundle can import it.
 */
export const TASK_ROW_FIELDS = ['state', 'task_type', 'task_name', 'created_at', 'started_at', 'finished_at', 'steps'] as const;

/** One field name of TASK_ROW_FIELDS. */
export type TaskRowField = (typeof TASK_ROW_FIELDS)[number];
