import { Type } from '../../../vendor/typebox.js';
import { ok } from '../../../schemas/job-response.js';
import { nowIso } from '../../../core/task-record/record-files.js';
import { defineJob } from '../../../core/job.js';
import type { Tasks } from '../tasks.js';
import { TaskHandle } from '../../../schemas/tasks.js';
import { BusinessError, PermissionError } from '../../../core/errors.js';
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
      'was accepted, not that the Task finished: follow it with wait_task or stream_task. A Task whose definition says cache: true ' +
      'is answered at once from an earlier succeeded run with the same inputs and input artifacts (a new Task, already succeeded, ' +
      'marked by metadata.cached_from in status); the boolean argument no_cache: true (beside task, not a Task input) runs it anyway.',
    // Task inputs sit next to `task`, so this schema allows extra fields; the Task's own schema checks them.
    // `no_cache` is not declared here: the spec fixes submit's parameters (task, then the Task's inputs).
    input: Type.Object({ task: Type.String({ minLength: 1, description: 'Registration name of the Task' }) }, { additionalProperties: true }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async (args, ctx) => {
      // `no_cache` says how to submit, like `task`: it is not one of the Task's inputs.
      const { task, no_cache: noCache = false, ...inputs } = args as { task: string; no_cache?: unknown } & Record<string, unknown>;
      if (typeof noCache !== 'boolean') throw new BusinessError('ValidationError', `no_cache must be true or false; got ${JSON.stringify(noCache)}`);
      // `command` runs any program, as `shell` does: only a caller who may call `shell` may start it
      // (an open service does not offer it: the catalog's Unknown task answers first).
      if (task === COMMAND_TASK && rt.definition(task) && !ctx.caller?.scope.get('shell')) {
        throw new PermissionError('the command Task runs arbitrary commands: submit it with a token that may call shell');
      }
      const handle = await rt.submit(task, inputs, ctx.caller?.token, noCache);
      const at = nowIso();
      await ctx.emit({ kind: 'progress', name: 'submit', started_at: at, finished_at: at, percentage: 100 });
      return ok(handle);
    },
  });
}
