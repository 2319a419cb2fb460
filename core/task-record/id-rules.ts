/**
 * The rules for the three parts of a Task ID, `<task_type>#<registration_name>#<task_name>`. The
 * runner, the Task SDK and the supervisor all check against these; this module imports nothing,
 * so the runner and plugins load it at no cost.
 */

/** Task types name a workspace directory: no dots first, no separators. */
export const TASK_TYPE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Registration names: no `#` (the Task ID separator) and nothing path-like. */
export const REGISTRATION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Spec: task_name is 1-32 letters, digits or hyphens. */
export const TASK_NAME = /^[A-Za-z0-9-]{1,32}$/;
