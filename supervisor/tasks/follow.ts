import { lstat } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { JobEvent, LogEvent, ProgressEvent } from '../../schemas/events.js';
import type { TaskLogChunk, TaskStatus } from '../../schemas/tasks.js';
import { isTerminal } from '../../core/task-record/record-files.js';
import type { JobContext } from '../../core/job.js';
import { emitSharedOf } from '../../core/shared-events.js';
import { KeyError, ValueError } from '../../core/errors.js';
import { changeFeedOf, FollowerWait } from './follow/change-feed.js';
import { FOLLOW_WINDOW_BYTES, type LiveTask } from './follow/live-task.js';
import { readLogWindow } from './follow/log-reader.js';
import { logEventOf } from './follow/task-broadcaster.js';
import type { TaskIndex } from './records/task-index.js';
import type { RunTable } from './runs/run-table.js';
import { isEarlierAttempt } from './records/run-history.js';

/** What waits and streams use of the facade's parts (one object, made once). */
export interface FollowParts {
  readonly index: TaskIndex;
  readonly runs: Pick<RunTable, 'get'>;
}

/** Beyond this size a new follower starts at the log's tail window instead of its beginning. */
const REPLAY_LIMIT_BYTES = 1024 * 1024;
/** Most events emitted together (one write). */
const BATCH_EVENTS = 256;

function currentStatus(parts: FollowParts, id: string): TaskStatus {
  const status = parts.index.get(id)?.status;
  if (!status) throw new KeyError(`Unknown task ${id}`);
  return status;
}

/**
 * Whether `runId`, which is not the Task's current run, is an attempt that was retried into it:
 * a wait on the first run_id of a submit follows its retries to the final run.
 */
async function retriedInto(parts: FollowParts, id: string, runId: string): Promise<boolean> {
  if (parts.runs.get(id)?.spec.earlier.includes(runId)) return true;
  const record = parts.index.get(id);
  return record !== undefined && (await isEarlierAttempt(record.dir, runId));
}

function notCurrent(id: string, runId: string): Error {
  return new ValueError(`run_id ${runId} is not the current execution of task ${id}`);
}

/**
 * Waits, from memory, until the Task is terminal. With `runId`, a different current execution
 * fails (spec: wait_task), unless `runId` was retried into it. `pollMs` only bounds staleness:
 * changes wake the wait at once.
 */
export async function waitForTerminal(parts: FollowParts, id: string, runId: string | undefined, pollMs: number, signal: AbortSignal): Promise<TaskStatus> {
  const feed = changeFeedOf(parts.index);
  const wait = new FollowerWait(signal);
  try {
    for (;;) {
      const status = currentStatus(parts, id);
      if (runId !== undefined && status.run_id !== runId && !(await retriedInto(parts, id, runId))) throw notCurrent(id, runId);
      if (isTerminal(status.state)) return status;
      parts.runs.get(id)?.live?.requestStaleness(pollMs);
      await wait.until(feed.next(id, pollMs));
    }
  } finally {
    wait.close();
  }
}

/**
 * `await_task`: waits at most `timeoutMs` for the run (`runId`, else the current one) to end, then
 * answers the status as it is; an unknown Task or another current run fails as in waitForTerminal.
 */
export async function waitAtMost(parts: FollowParts, id: string, runId: string | undefined, pollMs: number, timeoutMs: number, signal: AbortSignal): Promise<TaskStatus> {
  runId ??= parts.index.get(id)?.status?.run_id;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await waitForTerminal(parts, id, runId, pollMs, AbortSignal.any([signal, deadline]));
  } catch (err) {
    // The bound passed (not the caller gone): the run is still going, and that is the answer.
    if (!deadline.aborted || signal.aborted) throw err;
    const status = currentStatus(parts, id);
    if (runId !== undefined && status.run_id !== runId && !(await retriedInto(parts, id, runId))) throw notCurrent(id, runId);
    return status;
  }
}

const stepEvent = (s: TaskStatus['steps'][number]): ProgressEvent => ({ kind: 'progress', name: s.name, started_at: s.started_at, finished_at: s.finished_at, percentage: s.percentage });

/** Emits events together (one write for an SSE caller), resolving once all are sent. */
async function emitAll(ctx: JobContext, events: JobEvent[]): Promise<void> {
  if (events.length === 1) await ctx.emit(events[0]!);
  else if (events.length) await Promise.all(events.map((e) => ctx.emit(e)));
}

/**
 * `stream_task` over SSE: progress and log events as they happen, driven by the Task's shared
 * watcher, then the terminal status. A follower behind the others reads the log itself; followers
 * at the same offset share one read, one event object and so one serialization. What a change
 * brings (its progress events and the first log window) is emitted together: one write. An SSE
 * follower that has caught up joins the Task's broadcaster (task-broadcaster.ts), which writes
 * each change to all such followers at once, and comes back here when it falls behind.
 * With `expectedRun` (wait_task), a different current execution fails at the start, unless it
 * was retried into the current one. A followed attempt that is retried is followed into the next
 * attempt: its progress and log from their beginning (the first log event says `reset`).
 */
export async function streamTask(parts: FollowParts, id: string, expectedRun: string | undefined, pollMs: number, ctx: JobContext): Promise<TaskStatus> {
  const first = currentStatus(parts, id);
  let runId = first.run_id;
  if (expectedRun !== undefined && runId !== expectedRun && !(await retriedInto(parts, id, expectedRun))) throw notCurrent(id, expectedRun);
  // Undefined while the Task is queued: its watch starts with its runner.
  let live: LiveTask | undefined = parts.runs.get(id)?.live;
  live?.requestStaleness(pollMs);
  const logFile = `${parts.index.get(id)!.dir}/task.log`;
  let sentProgress = 0;
  let offset = -2;
  /** The next log event starts another attempt's log. */
  let resetNext = false;

  // Reads go through the Task's watcher, shared by all followers at the same offset, even once
  // it has closed: at the end a thousand followers read the last lines together, and a read each
  // made that the slowest moment of a stream.
  const readLog = (at: number): Promise<TaskLogChunk> => (live && at >= 0 ? live.readLog(at) : readLogWindow(logFile, at, FOLLOW_WINDOW_BYTES));
  /** The next log window owed to this follower, or null when it has everything known so far. */
  const nextLog = async (final: boolean): Promise<LogEvent | null> => {
    if (offset === -2) {
      // The live Task's size costs nothing (ten thousand followers joining made ten thousand
      // lstats); lstat: a link a Task put there is not followed (reading it is refused right after).
      const size = live && !live.closed ? live.logSize : await lstat(logFile).then((s) => s.size, () => 0);
      offset = size > REPLAY_LIMIT_BYTES ? -1 : 0;
    }
    const known = live && !live.closed && !final ? live.logSize : Infinity;
    if (offset >= 0 && offset >= known) return null;
    const chunk = await readLog(offset);
    const event = logEventOf(chunk, offset);
    if (!event) return null;
    offset = chunk.next_offset;
    if (!resetNext) return event;
    resetNext = false;
    return { ...event, reset: true };
  };
  const progressOwed = (status: TaskStatus): JobEvent[] => {
    const count = live ? live.progress.count : status.steps.length;
    if (count === sentProgress) return [];
    // A live Task keeps its latest events: a follower further behind skips to those.
    const owed = live ? live.progress.slice(sentProgress, count) : status.steps.slice(sentProgress).map(stepEvent);
    sentProgress = count;
    return owed;
  };

  // An SSE caller that takes shared writes can join the Task's broadcaster once caught up.
  const emitShared = emitSharedOf(ctx);
  const feed = changeFeedOf(parts.index);
  const wait = new FollowerWait(ctx.signal);
  try {
    for (;;) {
      const status = currentStatus(parts, id);
      if (status.run_id !== runId) {
        if (!(await retriedInto(parts, id, runId))) throw new ValueError(`task ${id} was replaced by a new run while it was followed`);
        // The attempt followed was retried: the next one is followed from its beginning.
        runId = status.run_id;
        live = undefined;
        sentProgress = 0;
        offset = 0;
        resetNext = true;
      }
      const done = isTerminal(status.state);
      if (!live && (live = parts.runs.get(id)?.live)) live.requestStaleness(pollMs);
      const batch = progressOwed(status);
      // Whether this follower wrote: its writer is idle once that write was taken.
      let wrote = batch.length > 0;
      // A late joiner owed thousands of steps gets them in bounded writes.
      while (batch.length > BATCH_EVENTS) await emitAll(ctx, batch.splice(0, BATCH_EVENTS));
      // Further windows (a replay, a burst) go one write each: a slow client holds back the reads.
      for (let log = await nextLog(done); log && !ctx.signal.aborted; log = await nextLog(done)) {
        batch.push(log);
        await emitAll(ctx, batch);
        batch.length = 0;
        wrote = true;
        // A write the socket takes at once resolves in a microtask: without a turn between windows,
        // a follower far behind held the event loop until it caught up (4 followers of a 64 MiB
        // log kept /health waiting 2.8 s; 20 of a 1 GB log, over 30 s).
        await nextTurn();
      }
      await emitAll(ctx, batch);
      if (done) return status;
      // Caught up, with an idle writer: the Task's broadcaster writes to it from now on, until it
      // falls behind or the Task ends; then it goes on from where it was left.
      if (wrote && emitShared && live && !live.closed && offset >= 0) {
        const left = await live.broadcaster.join(emitShared, { progress: sentProgress, offset }, ctx.signal);
        wait.check();
        if (left) {
          sentProgress = left.progress;
          offset = left.offset;
        }
        // Left, or not where the others stand: behind catches up now, ahead waits for the change.
        if (left || sentProgress < live.progress.count || offset < live.logSize) continue;
      }
      await wait.until(feed.next(id, pollMs));
    }
  } finally {
    wait.close();
  }
}
