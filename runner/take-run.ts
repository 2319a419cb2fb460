import { closeSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { Checked } from './message-check.js';
import { RUN_ASSIGNMENTS, RUN_FLAG, RUNNER_CHANNEL_FD, type RunAssignment, type RunnerEvent } from './spawner-messages.js';

/** What a runner tells the service once it has written its `running` record (or failed before). */
export type Acknowledge = (startedAt: string | null) => void;

function send(event: RunnerEvent): void {
  try {
    writeSync(RUNNER_CHANNEL_FD, `${JSON.stringify(event)}\n`);
  } catch {
    // The service is gone: a restarted one finds this run in /proc.
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
export function takeRun(): Acknowledge {
  if (process.env['TASKYARD_TASK_DIR']) return () => undefined;
  const slotIndex = process.argv.indexOf('--slot-log');
  const slotLog = slotIndex > 0 ? process.argv[slotIndex + 1] : undefined;
  if (!slotLog) throw new Error('task runner: TASKYARD_TASK_DIR is not set and no spawner hands over a run');
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
  return (startedAt) => {
    send({ type: 'accepted', startedAt });
    // The Task's own subprocesses must not inherit the channel.
    closeSync(RUNNER_CHANNEL_FD);
  };
}
