import { Type } from '../../../vendor/typebox.js';
import { ok, SerializedAnswer } from '../../../schemas/job-response.js';
import { READ_ONLY, defineJob } from '../../../core/job.js';
import { QueryTaskStatusesInput, TaskLogChunk, TaskStatus, TaskStatusPage } from '../../../schemas/tasks.js';
import type { Tasks } from '../tasks.js';

const LOG_OFFSET = -1;
const LOG_LIMIT = 65536;

const NoArguments = Type.Object({}, { additionalProperties: false });

/** list_task_ids, list_task_statuses, query_task_statuses, status, read_task_log: all answered from the index. */
export function queryJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'list_task_ids',
      output: Type.Array(Type.String()),
      description: 'Lists the IDs of Tasks that have a status record (metadata-only directories are not listed), sorted.',
      input: NoArguments,
      annotations: READ_ONLY,
      run: async () => ok(rt.taskIds()),
    }),
    defineJob({
      name: 'list_task_statuses',
      output: Type.Array(TaskStatus),
      description: 'Lists every TaskStatus, newest first (created_at, then task_id, descending). No filtering or pagination.',
      input: NoArguments,
      annotations: READ_ONLY,
      run: async () => ok(rt.listStatuses()),
    }),
    defineJob({
      name: 'query_task_statuses',
      output: TaskStatusPage,
      description:
        'metadata.submitted_by maps the ID of each listed Task to the name of the token that submitted it (when known); ' +
        'metadata.cached_from (when the page shows any) maps the ID of each listed result cache hit to the Task its result came from. ' +
        'Lists TaskStatus pages for dashboards (beyond the spec): filters by state, task_type, registration, created_after/before ' +
        'and text in the ID; newest first as list_task_statuses; continue with cursor = next_cursor. Every answer carries a version: ' +
        'pass it as changed_since to receive only the Tasks changed since (matching the filters) and the IDs deleted or no longer matching.',
      input: QueryTaskStatusesInput,
      annotations: READ_ONLY,
      run: async (query) => {
        // Who submitted each shown Task, and which are cache hits: beside the page, since TaskStatus has no such fields.
        const { page, facts } = rt.queryStatuses(query);
        return ok(page, facts);
      },
    }),
    defineJob({
      name: 'status',
      output: TaskStatus,
      description: 'Returns the TaskStatus of one Task. An unknown Task, or one with metadata but no status, is a KeyError.',
      input: Type.Object({ task_id: Type.String() }),
      annotations: READ_ONLY,
      run: async ({ task_id }) => {
        const { json, meta } = rt.statusText(task_id);
        return ok(SerializedAnswer.ofJson<TaskStatus>(json), meta);
      },
    }),
    defineJob({
      name: 'read_task_log',
      output: TaskLogChunk,
      description:
        'Reads a window of a Task log by byte offsets (offset -1 = tail, 0 = start; continue with next_offset). ' +
        'Never splits a UTF-8 character; reset is true when the offset lies past the end of the log.',
      input: Type.Object({
        task_id: Type.String(),
        offset: Type.Optional(Type.Integer({ minimum: -1, default: LOG_OFFSET, description: 'Byte offset; -1 reads the tail, 0 the start' })),
        limit: Type.Optional(Type.Integer({ minimum: 1024, maximum: 262144, default: LOG_LIMIT, description: 'Most bytes to read' })),
      }),
      annotations: READ_ONLY,
      run: async ({ task_id, offset = LOG_OFFSET, limit = LOG_LIMIT }) => {
        return ok(await rt.readLog(task_id, offset, limit));
      },
    }),
  ];
}
