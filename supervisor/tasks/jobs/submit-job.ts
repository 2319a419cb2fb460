import { Type } from '../../../vendor/typebox.js';
import { ok } from '../../../schemas/job-response.js';
import { nowIso } from '../../../core/task-record/record-files.js';
import { defineJob } from '../../../core/job.js';
import type { Tasks } from '../tasks.js';
import { TaskHandle } from '../../../schemas/tasks.js';
import { PermissionError } from '../../../core/errors.js';
import { COMMAND_TASK } from '../../../runner/command-tasks.js';

/** submit: starts a Task in its own process and answers its TaskHandle. */
export function submitJob(rt: Tasks) {
  return defineJob({
    name: 'submit',
    output: TaskHandle,
    description:
      'Starts a Task in a separate process. `task` is the registration name (list_installed_task_definitions); every other ' +
      "argument is one of that Task's inputs, as get_task_definition describes them (validated by the Task: unknown fields fail), " +
      'including task_name and source_tasks. Answers the TaskHandle {task_id, run_id, task}; success means the submission ' +
      'was accepted, not that the Task finished: follow it with wait_task or stream_task.',
    // Task inputs sit next to `task`, so this schema allows extra fields; the Task's own schema checks them.
    input: Type.Object({ task: Type.String({ minLength: 1, description: 'Registration name of the Task' }) }, { additionalProperties: true }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async (args, ctx) => {
      const { task, ...inputs } = args as { task: string } & Record<string, unknown>;
      // `command` runs any program, as `shell` does: only a caller who may call `shell` may start it
      // (an open service does not offer it: the catalog's Unknown task answers first).
      if (task === COMMAND_TASK && rt.definition(task) && !ctx.caller?.scope.get('shell')) {
        throw new PermissionError('the command Task runs arbitrary commands: submit it with a token that may call shell');
      }
      const handle = await rt.submit(task, inputs, ctx.caller?.token);
      const at = nowIso();
      await ctx.emit({ kind: 'progress', name: 'submit', started_at: at, finished_at: at, percentage: 100 });
      return ok(handle);
    },
  });
}
