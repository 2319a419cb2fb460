import { Type } from '../../../vendor/typebox.js';
import { ok } from '../../../schemas/job-response.js';
import { defineJob } from '../../../core/job.js';
import type { Tasks } from '../tasks.js';

const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true } as const;

/** cancel and delete_tasks. */
export function controlJobs(rt: Tasks) {
  return [
    defineJob({
      name: 'cancel',
      output: Type.Boolean(),
      description:
        'Cancels a queued or running Task managed by this service: SIGTERM to its process group, SIGKILL after a grace period, ' +
        'recorded as cancelled with exit code 130. Answers true only when this call cancelled it, false for a finished Task; ' +
        'an unknown Task ID is a KeyError, as for status.',
      input: Type.Object({ task_id: Type.String() }),
      // Cancelling twice changes nothing more (the second answers false).
      annotations: { ...DESTRUCTIVE, idempotentHint: true },
      run: async ({ task_id }) => ok(await rt.cancel(task_id)),
    }),
    defineJob({
      name: 'delete_tasks',
      output: Type.Array(Type.String()),
      description: 'Deletes terminal or metadata-only Tasks and answers the IDs actually deleted; active, unknown or invalid IDs are skipped.',
      input: Type.Object({ task_ids: Type.Array(Type.String(), { minItems: 1, uniqueItems: true }) }),
      annotations: { ...DESTRUCTIVE, idempotentHint: true },
      run: async ({ task_ids }) => ok(await rt.delete(task_ids)),
    }),
  ];
}
