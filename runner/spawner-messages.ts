/**
 * The messages between the service's executor, the spawner process and pooled task runners, one
 * typed, checked map per direction (see message-check.ts), and how a runner names its run in its
 * command line. The runner bundle imports this module, so it holds no value that needs
 * `import.meta` (see runner-file.ts).
 */
import type { TaskResources } from '../schemas/tasks.js';
import { constants } from 'node:fs';
import { count, countRecord, exitCode, MessageKinds, nonEmptyText, nullOnly, processId, signalName, text, textOrNull, textRecord, truth } from './message-check.js';

/** The argument before a runner's run_id: `runner.cjs --run <run_id>`. */
export const RUN_FLAG = '--run';
/** What an idle pooled runner carries instead of a run_id (as long as one, so the title fits). */
export const NO_RUN_YET = '-'.repeat(32);
/** A pooled runner's channel (to its spawner until ready, then to the service): JSON lines on a socket at this descriptor. */
export const RUNNER_CHANNEL_FD = 3;
/** A fresh slot log, written only at its end (O_APPEND), never through a link. */
export const SLOT_LOG_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND | constants.O_NOFOLLOW;

/**
 * What starting one run takes, whoever starts it: an engine (the executor seam), the spawner's
 * direct start, or an idle pooled runner the service hands the run to.
 */
export interface StartSpec {
  readonly runId: string;
  /** The Task directory: the runner's working directory. */
  readonly cwd: string;
  /** `task.log`: the runner's stdout and stderr. */
  readonly logFile: string;
  /** Variables added to the base environment (the TASKYARD_TASK_* identity, leased GPUs). */
  readonly env: Record<string, string>;
  /** What the run asks for; the Slurm engine turns it into sbatch options. */
  readonly resources: TaskResources;
  /** The Task ID, for names a person reads (a Slurm job name). */
  readonly taskId: string;
}

const startSpecFields = { runId: nonEmptyText, cwd: nonEmptyText, logFile: nonEmptyText, env: textRecord, resources: countRecord<TaskResources>(), taskId: text };

/**
 * Service → spawner: start one task runner (`spawn`); a pooled runner it was handed has answered
 * its run, so it is no longer idle (`taken`), or took a command run and comes back to the pool
 * after it (`kept`), and is idle again (`back`); runs are waiting for one (`want`). `waiting` is
 * how many runs wait for a pooled runner now: the spawner keeps that many starting beyond its
 * idle pool.
 */
export type SpawnerOrder =
  | ({ type: 'spawn' } & StartSpec)
  | { type: 'taken'; pid: number; waiting: number }
  | { type: 'kept'; pid: number; waiting: number }
  | { type: 'back'; pid: number }
  | { type: 'want'; waiting: number };

/** `taken` and `want`: what the pool of runners is used for. */
export type PoolNotice = Exclude<SpawnerOrder, { type: 'spawn' }>;

export const SPAWNER_ORDERS = new MessageKinds<SpawnerOrder>('service to spawner', {
  spawn: startSpecFields,
  taken: { pid: processId, waiting: count },
  kept: { pid: processId, waiting: count },
  back: { pid: processId },
  want: { waiting: count },
});

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

export const SPAWNER_EVENTS = new MessageKinds<SpawnerEvent>('spawner to service', {
  spawned: { runId: nonEmptyText, pid: processId, startedAt: nullOnly },
  'spawn-failed': { runId: nonEmptyText, message: text },
  ready: { pid: processId },
  'idle-limit': { max: count },
  'pool-failing': { message: text },
  exited: { pid: processId, code: exitCode, signal: signalName },
});

/** Service → idle pooled runner: the run it takes over (what the service would have asked the spawner to start). */
export type RunAssignment = { type: 'run' } & StartSpec;

export const RUN_ASSIGNMENTS = new MessageKinds<RunAssignment>('service to runner', { run: startSpecFields });

/**
 * Pooled runner → spawner (`ready`) and then → service. A runner that took a command run
 * (`reusable`) says when the run is over (`ended`) and then `ready` again on the same channel.
 */
export type RunnerEvent =
  | { type: 'ready' }
  /**
   * It took the run and wrote `running` (started_at), or null when it failed before that.
   * `reusable`: the run is a command run, whose code does not run in the runner: once it ends,
   * the runner says `ended` and serves another run instead of exiting.
   */
  | { type: 'accepted'; startedAt: string | null; reusable: boolean }
  /** The run could not be taken over here (its log is on another file system): start a fresh runner. */
  | { type: 'declined'; message: string }
  /**
   * Its run is over: the terminal record is written and nothing carrying the run's mark is left.
   * The runner lives on and resets itself for the next run (`ready` follows).
   */
  | { type: 'ended'; exitCode: number };

export const RUNNER_EVENTS = new MessageKinds<RunnerEvent>('runner', {
  ready: {},
  accepted: { startedAt: textOrNull, reusable: truth },
  declined: { message: text },
  ended: { exitCode: count },
});
