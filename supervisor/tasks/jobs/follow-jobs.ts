import { Type } from '@sinclair/typebox';
import { failed, ok } from '../../../schemas/job-response.js';
import { defineJob } from '../../../core/job.js';
import { streamTask, waitForTerminal } from '../follow.js';
import type { TaskRuntime } from '../task-runtime.js';

/** wait_task and stream_task: answered from the index, woken by file changes within milliseconds. */
export function followJobs(rt: TaskRuntime) {
  return [
    defineJob({
      name: 'wait_task',
      description:
        'Waits until the Task reaches a terminal state and answers its TaskStatus; success is true only for succeeded. ' +
        'A run_id that is not the current execution fails. poll_interval (seconds) only bounds staleness: changes are seen at once.',
      input: Type.Object(
        {
          task_id: Type.String({ minLength: 1 }),
          run_id: Type.String({ minLength: 1 }),
          poll_interval: Type.Number({ exclusiveMinimum: 0, default: 1 }),
        },
        { additionalProperties: false },
      ),
      run: async ({ task_id, run_id, poll_interval }, ctx) => {
        const status = await waitForTerminal(rt, task_id, run_id, poll_interval * 1000, ctx.signal);
        // The status's JSON is cached: every waiter and follower of a Task answers the same text.
        const answer = rt.index.statusJson(status);
        return status.state === 'succeeded' ? ok(answer) : failed(answer);
      },
    }),
    defineJob({
      name: 'stream_task',
      description:
        'Follows a Task until it stops. Over /events it emits progress and log events (byte offsets, channel "task") as they ' +
        'happen; the final result, like the ordinary call, carries the terminal TaskStatus; success follows exit_code == 0.',
      input: Type.Object(
        {
          task_id: Type.String({ minLength: 1 }),
          poll_interval: Type.Number({ exclusiveMinimum: 0, default: 0.5 }),
        },
        { additionalProperties: false },
      ),
      run: async ({ task_id, poll_interval }, ctx) => {
        const pollMs = poll_interval * 1000;
        const status = ctx.streaming ? await streamTask(rt, task_id, pollMs, ctx) : await waitForTerminal(rt, task_id, undefined, pollMs, ctx.signal);
        const answer = rt.index.statusJson(status);
        return status.exit_code === 0 ? ok(answer) : failed(answer);
      },
    }),
  ];
}
