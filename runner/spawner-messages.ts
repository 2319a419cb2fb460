/**
 * Typed messages between the service's executor, the spawner process and pooled task runners,
 * and how a runner names its run in its command line. The runner bundle imports this module, so
 * it holds no value that needs `import.meta` (see runner-file.ts).
 */

/** The argument before a runner's run_id: `runner.cjs --run <run_id>`. */
export const RUN_FLAG = '--run';
/** What an idle pooled runner carries instead of a run_id (as long as one, so the title fits). */
export const NO_RUN_YET = '-'.repeat(32);
/** A pooled runner's channel (to its spawner until ready, then to the service): JSON lines on a socket at this descriptor. */
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

/**
 * Service → spawner, besides `spawn`: a pooled runner it was handed has answered its run (it is
 * no longer idle), or runs are waiting for one. `waiting` is how many runs wait for a pooled
 * runner now: the spawner keeps that many runners starting beyond its idle pool.
 */
export type PoolNotice = { type: 'taken'; pid: number; waiting: number } | { type: 'want'; waiting: number };

/** Spawner → service: what became of a request, of the pool, and later of each process. */
export type SpawnerEvent =
  /** A runner started for one run (`spawn`); `startedAt`: null, it writes its record itself later. */
  | { type: 'spawned'; runId: string; pid: number; startedAt: null }
  | { type: 'spawn-failed'; runId: string; message: string }
  /** A pooled runner is ready; the message carries its channel (fd 3's other end): the service hands it a run directly. */
  | { type: 'ready'; pid: number }
  /**
   * How many ready runners the service may keep idle: twice the pool size while the pool is grown,
   * the pool size once the growth is over (the service lets the runners beyond it go).
   */
  | { type: 'idle-limit'; max: number }
  /** Pooled runners die before they are ready: the runs waiting for one fail with `message`. */
  | { type: 'pool-failing'; message: string }
  /** A runner this spawner started (directly or pooled, once ready) exited. */
  | { type: 'exited'; pid: number; code: number | null; signal: NodeJS.Signals | null };

/** What starting one run takes, whoever starts it (a spawner's direct start or an idle pooled runner). */
export type RunSpec = Omit<SpawnRequest, 'type'>;

/** Service → idle pooled runner: the run it takes over (the request the service would have sent the spawner). */
export type RunAssignment = RunSpec & { type: 'run' };

/** Pooled runner → service. */
export type RunnerEvent =
  | { type: 'ready' }
  /** It took the run and wrote `running` (started_at), or null when it failed before that. */
  | { type: 'accepted'; startedAt: string | null }
  /** The run could not be taken over here (its log is on another file system): start a fresh runner. */
  | { type: 'declined'; message: string };

/**
 * Calls `onEvent` with each JSON line read from a runner's channel. A line that is not JSON is
 * ignored: only the runner's exit then says how it went.
 */
export function onJsonLines<T>(channel: NodeJS.ReadableStream, onEvent: (event: T) => void): void {
  let pending = '';
  channel.setEncoding('utf8');
  channel.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      let event: T;
      try {
        event = JSON.parse(line) as T;
      } catch {
        continue;
      }
      onEvent(event);
    }
  });
}
