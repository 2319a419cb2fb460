import { Type } from '../../../vendor/typebox.js';
import { ok, StreamedAnswer } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import type { Tasks } from '../tasks.js';
import { TaskContextAnswer, TaskGraph } from '../../../schemas/tasks.js';

/**
 * An answer written as it is made (a fan-out of 50,000 is 14 MB of text): each pass (a write, or
 * MCP's materialize) makes the pieces again from the records the lineage took.
 */
function streamed<T>(pieces: () => Iterable<Uint8Array>): StreamedAnswer<T> {
  return new StreamedAnswer<T>(async function* () {
    yield* pieces();
  });
}

/** get_task_graph and get_task_context: lineage from recorded source_tasks. */
export function lineageJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'get_task_graph',
      output: TaskGraph,
      description: 'Returns the lineage graph of a Task (ancestors and descendants from recorded source_tasks), with missing and provisional nodes. Nothing is executed.',
      input: Type.Object({ task_id: Type.String() }, { additionalProperties: false }),
      annotations: READ_ONLY,
      run: async ({ task_id }) => {
        const lineage = rt.graph(task_id);
        return ok(streamed<TaskGraph>(() => lineage.pieces()));
      },
    }),
    defineJob({
      name: 'get_task_context',
      output: TaskContextAnswer,
      description: 'Returns a Task with its status, metadata and log locations, lineage graph and relations (direct upstream, ancestors, direct downstream, missing, provisional).',
      input: Type.Object({ task_id: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      annotations: READ_ONLY,
      run: async ({ task_id }) => {
        const { pieces, facts } = rt.context(task_id);
        return ok(streamed<TaskContextAnswer>(pieces), facts);
      },
    }),
  ];
}
