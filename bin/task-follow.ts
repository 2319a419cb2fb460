import type { TaskStatus } from '../schemas/tasks.js';
import { EXIT } from './cli-errors.js';
import type { Connection } from './connection.js';
import { streamJob } from './job-client.js';
import { progressText, statusLine } from './text-output.js';

/** How a followed Task ended: `stream_task`'s success, and the terminal status when it answered one. */
export interface FollowEnd {
  readonly success: boolean;
  readonly status: TaskStatus | undefined;
}

/**
 * Follows a Task through `stream_task` events: log text goes to stdout as it is written, progress
 * (steps) and the final status line to stderr (so `> run.log` keeps only the log). Resolves with
 * how it ended, for the caller to turn into an exit code.
 */
export async function followTaskToEnd(conn: Connection, taskId: string, opts: { progress: boolean }): Promise<FollowEnd> {
  let lastProgress = '';
  for await (const event of streamJob(conn, 'stream_task', { task_id: taskId })) {
    if (event.kind === 'log') process.stdout.write(event.content);
    else if (event.kind === 'progress' && opts.progress) {
      const line = progressText(event);
      if (line !== lastProgress) console.error(`[progress] ${line}`);
      lastProgress = line;
    } else if (event.kind === 'result') {
      const status = event.answer as TaskStatus | string;
      const ended = typeof status === 'object' && status !== null;
      console.error(ended ? statusLine(status) : `failed: ${String(status)}`);
      return { success: event.success, status: ended ? status : undefined };
    }
  }
  console.error('taskyard: the stream ended without a result event');
  return { success: false, status: undefined };
}

/** Follows a Task to its end; the exit code is its outcome: 0 when it succeeded, 1 otherwise. */
export async function followTask(conn: Connection, taskId: string, opts: { progress: boolean }): Promise<number> {
  return (await followTaskToEnd(conn, taskId, opts)).success ? EXIT.success : EXIT.failure;
}
