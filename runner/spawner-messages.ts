/**
 * Typed messages between the service's executor, the spawner process and pooled task runners,
 * and how a runner names its run in its command line. The runner bundle imports this module, so
 * it holds no value that needs `import.meta` (see runner-file.ts).
 */

/** The argument before a runner's run_id: `runner.cjs --run <run_id>`. */
export const RUN_FLAG = '--run';
/** What an idle pooled runner carries instead of a run_id (as long as one, so the title fits). */
export const NO_RUN_YET = '-'.repeat(32);
/** A pooled runner's channel to its spawner: JSON lines on a pipe at this descriptor. */
export const RUNNER_CHANNEL_FD = 3;

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
  /** `startedAt`: the runner wrote its `running` record at that time (a pooled runner says so). */
  | { type: 'spawned'; runId: string; pid: number; startedAt: string | null }
  | { type: 'spawn-failed'; runId: string; message: string }
  | { type: 'exited'; runId: string; code: number | null; signal: NodeJS.Signals | null };

/** Spawner → idle pooled runner: the run it takes over (the service's request, passed on). */
export type RunAssignment = Omit<SpawnRequest, 'type'> & { type: 'run' };

/** Pooled runner → spawner. */
export type RunnerEvent =
  | { type: 'ready' }
  /** It took the run and wrote `running` (started_at), or null when it failed before that. */
  | { type: 'accepted'; startedAt: string | null }
  /** The run could not be taken over here (its log is on another file system): start a fresh runner. */
  | { type: 'declined'; message: string };
