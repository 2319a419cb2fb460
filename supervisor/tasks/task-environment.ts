/** Never handed to Task code or any other child: the service's own credentials. */
const PRIVATE_VARIABLES = ['TASKYARD_TOKEN'] as const;

/** The environment of the service's children: its own, plus `extra`, less its secrets. */
export function taskEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of PRIVATE_VARIABLES) delete env[name];
  return env;
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
