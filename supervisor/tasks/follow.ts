import { lstat } from 'node:fs/promises';
import type { ProgressEvent } from '../../schemas/events.js';
import type { TaskLogChunk, TaskStatus } from '../../schemas/tasks.js';
import { isTerminal } from '../../workers/task-runner/record-files.js';
import type { JobContext } from '../../core/job.js';
import { BusinessError, KeyError, ValueError } from '../../core/errors.js';
import { FOLLOW_WINDOW_BYTES, type LiveTask } from './live-task.js';
import { readLogWindow } from './log-reader.js';
import type { TaskRuntime } from './task-runtime.js';

/** Beyond this size a new follower starts at the log's tail window instead of its beginning. */
const REPLAY_LIMIT_BYTES = 1024 * 1024;

/** Resolves at the Task's next change, after `pollMs` (the staleness bound), or on abort. */
async function nextChange(rt: TaskRuntime, id: string, pollMs: number, signal: AbortSignal): Promise<void> {
  if (!signal.aborted) await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stopWaiting();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, pollMs);
    const stopWaiting = rt.index.onNextChange(id, done);
    signal.addEventListener('abort', done, { once: true });
  });
  if (signal.aborted) throw new BusinessError('CancelledError', 'the caller went away');
}

function currentStatus(rt: TaskRuntime, id: string): TaskStatus {
  const status = rt.index.get(id)?.status;
  if (!status) throw new KeyError(`Unknown task ${id}`);
  return status;
}

/**
 * Waits, from memory, until the Task is terminal. With `runId`, a different current execution
 * fails (spec: wait_task). `pollMs` only bounds staleness: changes wake the wait at once.
 */
export async function waitForTerminal(rt: TaskRuntime, id: string, runId: string | undefined, pollMs: number, signal: AbortSignal): Promise<TaskStatus> {
  for (;;) {
    const status = currentStatus(rt, id);
    if (runId !== undefined && status.run_id !== runId) throw new ValueError(`run_id ${runId} is not the current execution of task ${id}`);
    if (isTerminal(status.state)) return status;
    rt.liveOf(id)?.requestStaleness(pollMs);
    await nextChange(rt, id, pollMs, signal);
  }
}

const stepEvent = (s: TaskStatus['steps'][number]): ProgressEvent => ({ kind: 'progress', name: s.name, started_at: s.started_at, finished_at: s.finished_at, percentage: s.percentage });

/**
 * `stream_task` over SSE: progress and log events as they happen, driven by the Task's shared
 * watcher, then the terminal status. A follower behind the others reads the log itself; followers
 * at the same offset share one read.
 */
export async function streamTask(rt: TaskRuntime, id: string, pollMs: number, ctx: JobContext): Promise<TaskStatus> {
  const first = currentStatus(rt, id);
  const runId = first.run_id;
  // Undefined while the Task is queued: its watch starts with its worker.
  let live: LiveTask | undefined = rt.liveOf(id);
  live?.requestStaleness(pollMs);
  const logFile = `${rt.index.get(id)!.dir}/task.log`;
  let sentProgress = 0;
  let offset = -2;

  // Reads go through the Task's watcher, shared by all followers at the same offset, even once
  // it has closed: at the end a thousand followers read the last lines together, and a read each
  // made that the slowest moment of a stream.
  const readLog = (at: number): Promise<TaskLogChunk> => (live && at >= 0 ? live.readLog(at) : readLogWindow(logFile, at, FOLLOW_WINDOW_BYTES));
  const drainLog = async (final: boolean) => {
    for (;;) {
      if (offset === -2) {
        // lstat: a link a Task put there is not followed (reading it is refused right after).
        const size = await lstat(logFile).then((s) => s.size, () => 0);
        offset = size > REPLAY_LIMIT_BYTES ? -1 : 0;
      }
      const known = live && !live.closed && !final ? live.logSize : Infinity;
      if (offset >= 0 && offset >= known) return;
      const chunk = await readLog(offset);
      if (chunk.next_offset === offset || (chunk.content === '' && !chunk.reset)) return;
      offset = chunk.next_offset;
      await ctx.emit({ kind: 'log', ...chunk, channel: 'task' });
      if (ctx.signal.aborted) return;
    }
  };
  const drainProgress = async (status: TaskStatus) => {
    const events = live ? live.progress : status.steps.map(stepEvent);
    while (sentProgress < events.length && !ctx.signal.aborted) await ctx.emit(events[sentProgress++]!);
  };

  for (;;) {
    const status = currentStatus(rt, id);
    if (status.run_id !== runId) throw new ValueError(`task ${id} was replaced by a new run while it was followed`);
    const done = isTerminal(status.state);
    if (!live && (live = rt.liveOf(id))) live.requestStaleness(pollMs);
    await drainProgress(status);
    await drainLog(done);
    if (done) return status;
    await nextChange(rt, id, pollMs, ctx.signal);
  }
}
