import { Type } from '../../../vendor/typebox.js';
import { ok, StreamedAnswer } from '../../../schemas/job-response.js';
import { TASK_FILES } from '../../../core/task-record/record-files.js';
import { KeyError } from '../../../core/errors.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { Lineage } from '../graph.js';
import { relativeTaskPath } from '../records/task-ids.js';
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
        if (!rt.index.get(task_id)) throw new KeyError(`Unknown task ${task_id}`);
        const lineage = Lineage.of(rt.index, task_id);
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
        const record = rt.index.get(task_id);
        if (!record?.status) throw new KeyError(record ? `task ${task_id} has metadata but no status record` : `Unknown task ${task_id}`);
        const lineage = Lineage.of(rt.index, task_id);
        const metadataPath = relativeTaskPath(record.parts, task_id, TASK_FILES.metadata);
        const logPath = record.status.log_path || null;
        // The fields as text, from the cached texts of the status and of the graph's nodes.
        const head =
          `{"task_id":${JSON.stringify(task_id)},"status":${rt.index.statusJson(record.status).json},"metadata_exists":${record.hasMetadata},` +
          `"metadata_path":${JSON.stringify(metadataPath)},"log_path":${JSON.stringify(logPath)},"graph":`;
        const tail = `,"relations":${lineage.relationsJson}}`;
        const submittedBy = rt.submitters.of(record);
        return ok(streamed<TaskContextAnswer>(() => lineage.pieces(head, tail)), submittedBy === undefined ? {} : { submitted_by: submittedBy });
      },
    }),
  ];
}
