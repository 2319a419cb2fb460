import type { TaskStatus } from '../schemas/tasks.js';
import { EXIT } from './cli-errors.js';
import type { Connection } from './connection.js';
import { streamJob } from './job-client.js';
import { statusLine } from './text-output.js';

/**
 * Follows a Task through `stream_task` events: log text goes to stdout as it is written, progress
 * and the final status line to stderr (so `> run.log` keeps only the log). The exit code is the
 * Task's outcome: 0 when it succeeded.
 */
export async function followTask(conn: Connection, taskId: string, opts: { progress: boolean }): Promise<number> {
  let lastProgress = '';
  for await (const event of streamJob(conn, 'stream_task', { task_id: taskId })) {
    if (event.kind === 'log') process.stdout.write(event.content);
    else if (event.kind === 'progress' && opts.progress) {
      const line = `${event.name}${event.percentage != null ? ` ${event.percentage}%` : ''}${event.finished_at ? ' done' : ''}`;
      if (line !== lastProgress) console.error(`[progress] ${line}`);
      lastProgress = line;
    } else if (event.kind === 'result') {
      const status = event.answer as TaskStatus | string;
      console.error(typeof status === 'object' && status !== null ? statusLine(status) : `failed: ${String(status)}`);
      return event.success ? EXIT.success : EXIT.failure;
    }
  }
  console.error('taskyard: the stream ended without a result event');
  return EXIT.failure;
}
