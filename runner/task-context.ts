import type { RunReports } from './run-reports.js';
import type { TaskContext } from './task-sdk.js';

/** Who the run is, as the runner learned it from its environment. */
export interface ContextIdentity {
  workspace: string;
  registration: string;
  taskId: string;
  runId: string;
  createdAt: string;
}

/**
 * Builds the frozen TaskContext of one run: a thin client of the Task protocol, whose every
 * helper is one report to the run's receiver (RunReports), as a command Task's lines are.
 */
export function createTaskContext(id: ContextIdentity, reports: RunReports): TaskContext {
  const ctx: TaskContext = {
    workspace_path: id.workspace,
    registration_name: id.registration,
    task_id: id.taskId,
    run_id: id.runId,
    created_at: id.createdAt,
    logger: Object.freeze({
      debug: (message: string) => reports.log('debug', message),
      info: (message: string) => reports.log('info', message),
      warn: (message: string) => reports.log('warning', message),
      error: (message: string) => reports.log('error', message),
    }),
    async step(name, fn) {
      const step = reports.beginStep(name);
      try {
        return await fn();
      } finally {
        reports.endStep(step);
      }
    },
    progress: (percentage) => reports.progress(percentage),
    metric: (name, value, options) => reports.metric(name, value, options?.step),
    artifact: (name, relativePath) => reports.artifact(name, relativePath),
  };
  return Object.freeze(ctx);
}
