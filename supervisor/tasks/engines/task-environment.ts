import { childEnv } from '../../../workers/child-env.js';

/** The environment of Task runners and the plugin describer: the service's own plus `extra`, less its secrets. */
export function taskEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return childEnv({ ...process.env, ...extra });
}

/** Who a run is, as a runner learns it from its environment (TASKYARD_TASK_* and TASKYARD_RUN_ID). */
export interface RunIdentity {
  workspace: string;
  dir: string;
  taskId: string;
  runId: string;
  taskType: string;
  registration: string;
  /** Absolute path of the plugin's task module, or '' for a built-in. */
  module: string;
}

/** The identity variables of a run: the service's executor and `taskyard task run` pass the same. */
export function identityVariables(run: RunIdentity): Record<string, string> {
  return {
    TASKYARD_WORKSPACE: run.workspace,
    TASKYARD_TASK_DIR: run.dir,
    TASKYARD_TASK_ID: run.taskId,
    TASKYARD_RUN_ID: run.runId,
    TASKYARD_TASK_TYPE: run.taskType,
    TASKYARD_TASK_REGISTRATION: run.registration,
    TASKYARD_TASK_MODULE: run.module,
  };
}

/**
 * The environment entry every process of a run inherits (the runner sets it for the Task and the
 * Task's subprocesses): a kill finds by it the processes that left the run's group and parent chain.
 */
export function runMark(runId: string): string {
  return `TASKYARD_RUN_ID=${runId}`;
}
