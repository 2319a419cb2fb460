import { Type } from '../../../vendor/typebox.js';
import { failed, ok } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { isTerminal } from '../../../core/task-record/record-files.js';
import type { Tasks } from '../tasks.js';
import { TaskStatus } from '../../../schemas/tasks.js';

const WAIT_POLL_S = 1;
const STREAM_POLL_S = 0.5;
/** await_task's bound (s): under the 60 s a common MCP client gives a request, with room to spare. */
const AWAIT_DEFAULT_S = 45;
const AWAIT_MAX_S = 55;

/** `poll_interval`: optional, its default shown (spec: Task Jobs). */
const pollInterval = (seconds: number) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, default: seconds, description: 'Seconds; only bounds staleness, changes are seen at once' }));

/** wait_task and stream_task: answered from the index, woken by file changes within milliseconds. */
export function followJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'wait_task',
      output: TaskStatus,
      description:
        'Waits until the Task reaches a terminal state and answers its TaskStatus; success is true only for succeeded. ' +
        'task_id and run_id come from the answer of submit; a run_id that is not the current execution fails, unless the Task was retried from it (then the final run is awaited). ' +
        'With a progress token, sends progress (step, percentage, last log line) while it waits. ' +
        'It has no timeout: an MCP client that cuts calls after a minute should call await_task instead.',
      input: Type.Object(
        {
          task_id: Type.String({ minLength: 1 }),
          run_id: Type.String({ minLength: 1 }),
          poll_interval: pollInterval(WAIT_POLL_S),
        },
        { additionalProperties: false },
      ),
      annotations: READ_ONLY,
      run: async ({ task_id, run_id, poll_interval = WAIT_POLL_S }, ctx) => {
        const pollMs = poll_interval * 1000;
        // A caller that reads events (an MCP progress token) is told the Task's steps and log
        // while it waits; the run_id rule holds at the start, and following fails on a new run (a retry's next attempt is followed).
        const status = ctx.streaming ? await rt.follow(task_id, run_id, pollMs, ctx) : await rt.wait(task_id, run_id, pollMs, ctx.signal);
        // The status's JSON is cached: every waiter and follower of a Task answers the same text.
        const answer = rt.answerOf(status);
        return status.state === 'succeeded' ? ok(answer) : failed(answer);
      },
    }),
    defineJob({
      name: 'await_task',
      output: TaskStatus,
      description:
        `Waits at most \`timeout\` seconds (default ${AWAIT_DEFAULT_S}, at most ${AWAIT_MAX_S}) for a Task run to end and answers its TaskStatus. ` +
        'metadata.done is true when the run has ended (success is then true only for succeeded, as with wait_task); while ' +
        'metadata.done is false the run is still going: this is not an error, call await_task again with the same arguments. ' +
        'task_id (and run_id, optional: the current run when omitted) come from the answer of submit; a run the Task was retried from is followed to its next attempts. Fits clients whose calls time out after a minute.',
      input: Type.Object(
        {
          task_id: Type.String({ minLength: 1 }),
          run_id: Type.Optional(Type.String({ minLength: 1, description: 'The run to wait for; the current one when omitted' })),
          timeout: Type.Optional(
            Type.Number({ exclusiveMinimum: 0, maximum: AWAIT_MAX_S, default: AWAIT_DEFAULT_S, description: 'Seconds to wait at most before answering the status as it is' }),
          ),
        },
        { additionalProperties: false },
      ),
      annotations: READ_ONLY,
      run: async ({ task_id, run_id, timeout = AWAIT_DEFAULT_S }, ctx) => {
        const status = await rt.waitAtMost(task_id, run_id, WAIT_POLL_S * 1000, timeout * 1000, ctx.signal);
        const done = isTerminal(status.state);
        const answer = rt.answerOf(status);
        return done && status.state !== 'succeeded' ? failed(answer, { done }) : ok(answer, { done });
      },
    }),
    defineJob({
      name: 'stream_task',
      output: TaskStatus,
      description:
        'Follows a Task until it stops and answers the terminal TaskStatus; success follows exit_code == 0. ' +
        'With a progress token, its steps and log lines arrive as progress notifications while it runs ' +
        '(read the full log by byte offsets with read_task_log).',
      input: Type.Object(
        {
          task_id: Type.String({ minLength: 1 }),
          poll_interval: pollInterval(STREAM_POLL_S),
        },
        { additionalProperties: false },
      ),
      annotations: READ_ONLY,
      run: async ({ task_id, poll_interval = STREAM_POLL_S }, ctx) => {
        const pollMs = poll_interval * 1000;
        const status = ctx.streaming ? await rt.follow(task_id, undefined, pollMs, ctx) : await rt.wait(task_id, undefined, pollMs, ctx.signal);
        const answer = rt.answerOf(status);
        return status.exit_code === 0 ? ok(answer) : failed(answer);
      },
    }),
  ];
}
