import { closeSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { Checked } from './message-check.js';
import { RUN_ASSIGNMENTS, RUN_FLAG, RUNNER_CHANNEL_FD, type RunAssignment, type RunnerEvent } from './spawner-messages.js';
import { COMMAND_TASK, isManifestFile } from './command-tasks.js';
import { PooledRunnerState } from './runner-reuse.js';

/** What a runner tells the service once it has written its `running` record (or failed before). */
export type Acknowledge = (startedAt: string | null) => void;

/** A run this runner took. */
export interface TakenRun {
  readonly acknowledge: Acknowledge;
  /**
   * Once the run's terminal record is written: true when this runner goes back to the pool for
   * another run (a pooled runner that served a command run, reset), false when it must exit.
   */
  release(exitCode: number): Promise<boolean>;
}

/** True when the service heard it; false when the channel is gone (the service went away). */
function send(event: RunnerEvent): boolean {
  try {
    writeSync(RUNNER_CHANNEL_FD, `${JSON.stringify(event)}\n`);
    return true;
  } catch {
    // The service is gone: a restarted one finds this run in /proc.
    return false;
  }
}

/** One read from the channel; 0 when its other end is gone (end of file, or a reset when it closed with our `ready` unread). */
function readChannel(buf: Buffer): number {
  try {
    return readSync(RUNNER_CHANNEL_FD, buf);
  } catch {
    return 0;
  }
}

/**
 * Waits, blocked in one read, for the service's assignment: a pooled runner has nothing else to
 * do until then. Null when the channel closed first (the service or the spawner went away).
 */
function receive(): Checked<RunAssignment> | null {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(16384);
  for (;;) {
    const n = readChannel(buf);
    if (n === 0) return null;
    const end = buf.subarray(0, n).indexOf(0x0a);
    chunks.push(Buffer.from(buf.subarray(0, end < 0 ? n : end)));
    if (end >= 0) return RUN_ASSIGNMENTS.parse(Buffer.concat(chunks).toString('utf8'));
  }
}

/**
 * Whether a run may leave this runner alive for the next: a command run (built-in `command` or a
 * manifest Task, whose code runs in a process of its own, never in the runner) that does not
 * change the runner's user (`service.run_as` cannot be undone).
 */
function reusable(env: NodeJS.ProcessEnv): boolean {
  if (env['TASKYARD_RUN_AS']) return false;
  const module = env['TASKYARD_TASK_MODULE'] ?? '';
  return module === '' ? env['TASKYARD_TASK_REGISTRATION'] === COMMAND_TASK : isManifestFile(module);
}

const notReused = async () => false;

/** A pooled runner's state as it started (its environment, working directory, title, stdout): restored between runs. */
let pooled: PooledRunnerState | undefined;

/** Says the run cannot be taken here, and exits (its slot log removed). */
function decline(slotLog: string, message: string): never {
  send({ type: 'declined', message });
  rmSync(slotLog, { force: true });
  process.exit(0);
}

/**
 * How a runner learns its run. Started for one run (the spawner's direct start, or a tool such as
 * `taskyard task run`), the TASKYARD_TASK_* identity is in its environment already: nothing to
 * acknowledge. Started ahead of need by the spawner's pool, it says it is ready and waits idle
 * until the service hands it a run on the same channel (the spawner passed the service its other
 * end): then it moves its slot log onto the run's `task.log` (its stdout and stderr keep
 * writing to the same file), takes the identity into its environment and working directory, and
 * names the run in its command line, where a restarted service recognises it in /proc.
 *
 * The pool talks over a plain socket on fd 3, not Node's IPC channel: setting that channel up
 * costs every runner ~6 ms of CPU at start, a sixth of a short Task's whole cost. The answer
 * returned acknowledges the run once the caller has written its `running` record, so the service
 * shows `running` from that message instead of waiting for a file watch.
 */
export function takeRun(): TakenRun {
  if (!pooled && process.env['TASKYARD_TASK_DIR']) return { acknowledge: () => undefined, release: notReused };
  const slotIndex = process.argv.indexOf('--slot-log');
  const slotLog = slotIndex > 0 ? process.argv[slotIndex + 1] : undefined;
  if (!slotLog) throw new Error('task runner: TASKYARD_TASK_DIR is not set and no spawner hands over a run');
  pooled ??= new PooledRunnerState(slotLog);
  const state = pooled;
  send({ type: 'ready' });
  const received = receive();
  if (!received) {
    // Idle when the service (or, before it was ready, the spawner) went: nothing to run, nothing to keep.
    rmSync(slotLog, { force: true });
    process.exit(0);
  }
  // A malformed assignment is declined with what was wrong: the service then asks the spawner,
  // which checks the same fields and answers why the run could not start.
  if (!received.ok) decline(slotLog, received.error);
  const run = received.message;
  try {
    renameSync(slotLog, run.logFile);
  } catch (err) {
    decline(slotLog, (err as Error).message);
  }
  Object.assign(process.env, run.env, { TASKYARD_TASK_DIR: run.cwd });
  process.chdir(run.cwd);
  // Same length as the arguments it replaces (NO_RUN_YET is as long as a run_id), so it fits.
  process.title = [process.argv0, process.argv[1], RUN_FLAG, run.runId].join(' ');
  const reuse = reusable(process.env);
  return {
    acknowledge: (startedAt) => {
      send({ type: 'accepted', startedAt, reusable: reuse });
      // The Task's own subprocesses must not inherit the channel. A command run's process gets
      // the protocol channel at the same descriptor (command-run.ts), which replaces this one in it.
      if (!reuse) closeSync(RUNNER_CHANNEL_FD);
    },
    release: async (exitCode) => reuse && state.endRun() && send({ type: 'ended', exitCode }),
  };
}
