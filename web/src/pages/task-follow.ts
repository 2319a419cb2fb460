import type { Api } from '../api/client.js';
import { TERMINAL_STATES, type TaskLogChunk, type TaskStatus, type TaskStep } from '../api/types.js';
import { sleep } from '../app/page.js';
import type { LogWindow } from '../ui/log-window.js';

export interface FollowHooks {
  /** A step's progress changed (from a `progress` event). */
  onStep(step: TaskStep): void;
  /** The Task reached a terminal state (or the stream ended): reload everything once. */
  onEnd(): void;
}

const readLog = (api: Api, taskId: string, signal: AbortSignal) => (offset: number, limit: number) =>
  api.answer<TaskLogChunk>('read_task_log', { task_id: taskId, offset, limit }, { signal });

/** The window's byte reader for one Task (`read_task_log`). */
export function logReader(api: Api, taskId: string, signal: AbortSignal): (offset: number, limit: number) => Promise<TaskLogChunk> {
  return readLog(api, taskId, signal);
}

/**
 * Follows an active Task through `stream_task` over SSE: progress events move the step bars,
 * log events go into the log window by their byte offsets. If the stream cannot be used (an
 * older service, a proxy that buffers), it falls back to reading the log from the window's end
 * offset and polling the status.
 */
export async function followTask(api: Api, taskId: string, log: LogWindow, hooks: FollowHooks, signal: AbortSignal): Promise<void> {
  try {
    await api.stream(
      'stream_task',
      { task_id: taskId },
      (event) => {
        if (event.kind === 'progress') hooks.onStep({ name: event.name, started_at: event.started_at, finished_at: event.finished_at, percentage: event.percentage });
        else if (event.kind === 'log') void log.add(event);
      },
      signal,
    );
    if (!signal.aborted) hooks.onEnd();
    return;
  } catch {
    if (signal.aborted) return;
  }
  await pollTask(api, taskId, log, hooks, signal);
}

async function pollTask(api: Api, taskId: string, log: LogWindow, hooks: FollowHooks, signal: AbortSignal): Promise<void> {
  const read = readLog(api, taskId, signal);
  while (!signal.aborted) {
    try {
      await log.add(await read(Math.max(0, log.end), 65_536));
      const status = await api.answer<TaskStatus>('status', { task_id: taskId }, { signal });
      status.steps.forEach((s) => hooks.onStep(s));
      if (TERMINAL_STATES.has(status.state)) {
        await log.add(await read(Math.max(0, log.end), 262_144));
        return hooks.onEnd();
      }
    } catch {
      // Transient: try again after the pause.
    }
    await sleep(1000, signal);
  }
}
