import { Type } from '../../../vendor/typebox.js';
import { ok } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import type { Tasks } from '../tasks.js';
import { TaskDefinition } from '../../../schemas/tasks.js';

/** list_installed_task_definitions, get_task_definition. */
export function definitionJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'list_installed_task_definitions',
      output: Type.Array(TaskDefinition),
      description: 'Lists every installed Task definition (built-in and from plugins), sorted by registration name, with input and output schemas.',
      input: Type.Object({}, { additionalProperties: false }),
      annotations: READ_ONLY,
      run: async () => ok(rt.definitions()),
    }),
    defineJob({
      name: 'get_task_definition',
      output: TaskDefinition,
      description: 'Returns one Task definition by registration name (not a Task ID): source, plugin, task type, description and schemas.',
      input: Type.Object({ task: Type.String({ minLength: 1, description: 'Registration name, e.g. demo' }) }, { additionalProperties: false }),
      annotations: READ_ONLY,
      run: async ({ task }) => ok(rt.definition(task)),
    }),
  ];
}
