/**
 * Typed messages between the service's executor, the spawner process and pooled task runners,
 * and how a runner names its run in its command line. The runner bundle imports this module, so
 * it holds no value that needs `import.meta` (see runner-file.ts).
 */

/** The argument before a runner's run_id: `runner.cjs --run <run_id>`. */
export const RUN_FLAG = '--run';
/** What an idle pooled runner carries instead of a run_id (as long as one, so the title fits). */
export const NO_RUN_YET = '-'.repeat(32);

/** Service → spawner: start one task runner. */
export interface SpawnRequest {
  type: 'spawn';
  runId: string;
  /** The Task directory: the runner's working directory. */
  cwd: string;
  /** `task.log`: the runner's stdout and stderr. */
  logFile: string;
  /** Variables added to the base environment (the TASKYARD_TASK_* identity). */
  env: Record<string, string>;
}

/** Spawner → service: what became of a request, and later of the process. */
export type SpawnerEvent =
  | { type: 'spawned'; runId: string; pid: number }
  | { type: 'spawn-failed'; runId: string; message: string }
  | { type: 'exited'; runId: string; code: number | null; signal: NodeJS.Signals | null };

/** Spawner → idle pooled runner: the run it takes over. */
export interface RunAssignment {
  type: 'run';
  runId: string;
  cwd: string;
  logFile: string;
  env: Record<string, string>;
}

/** Pooled runner → spawner. */
export type RunnerEvent =
  | { type: 'ready' }
  | { type: 'accepted' }
  /** The run could not be taken over here (its log is on another file system): start a fresh runner. */
  | { type: 'declined'; message: string };
