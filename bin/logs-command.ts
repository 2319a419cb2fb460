import { CallError, EXIT, UsageError } from './cli-errors.js';
import { resolveConnection, type Connection } from './connection.js';
import { callJob } from './job-client.js';
import { subCommand } from './sub-command.js';
import { followTask } from './task-follow.js';

const USAGE = `usage: taskyard logs TASK_ID [--follow] [--url URL | --target ADDRESS] [--token TOKEN]

Prints the Task's log as plain text (read with read_task_log from its first byte). --follow keeps
printing new lines through stream_task until the Task ends, then prints its final status line on
stderr and exits 0 when it succeeded, 1 otherwise.`;

/** The biggest window read_task_log gives (spec: limit at most 262144 bytes). */
const WINDOW_BYTES = 262_144;

/** Prints the whole log as it is now, window by window. */
async function printLog(conn: Connection, taskId: string): Promise<number> {
  let offset = 0;
  for (;;) {
    const response = await callJob(conn, 'read_task_log', { task_id: taskId, offset, limit: WINDOW_BYTES });
    if (!response.success) throw new CallError(String(response.answer));
    const chunk = response.answer;
    process.stdout.write(chunk.content);
    if (!chunk.has_more_after || chunk.next_offset <= offset) return EXIT.success;
    offset = chunk.next_offset;
  }
}

/** `taskyard logs TASK_ID [--follow]`: returns the exit code. */
export function logsCommand(argv: string[]): Promise<number> {
  return subCommand('taskyard logs', USAGE, argv, async ({ job: taskId, options, fields }) => {
    if (taskId === undefined) throw new UsageError('name the Task ID whose log to print');
    if (fields.length) throw new UsageError(`unexpected argument ${JSON.stringify(fields[0])}`);
    const conn = await resolveConnection(options);
    return options.follow ? followTask(conn, taskId, { progress: false }) : printLog(conn, taskId);
  });
}
