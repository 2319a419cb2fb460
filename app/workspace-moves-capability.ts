import { Type } from '../vendor/typebox.js';
import { ok } from '../schemas/job-response.js';
import { declareCapability } from './capability-contract.js';
import { defineJob } from '../core/job.js';
import { MovedEntry, WORKSPACE_LIMITS } from '../schemas/workspace.js';
import { moveEntries } from '../supervisor/workspace/move-entries.js';

/** move_entries: moves or copies workspace entries (beyond the spec); it needs the Tasks to keep out of active Task directories. */
export const workspaceMovesCapability = declareCapability({
  name: 'workspace-moves',
  needs: ['tasks'],
  build: (env, { tasks }) => ({
    jobs: [
      defineJob({
        name: 'move_entries',
        output: Type.Array(MovedEntry),
        description:
          'Moves (or with copy=true copies) workspace files and directories, 1-200 at a time, e.g. a staged upload tmp/<sha256>/train.csv to data/train.csv; ' +
          "missing parent directories of a destination are made. Every move is checked before any is done: paths stay inside the workspace (not its root, not the service's private directory), " +
          'the source exists, the destination does not unless overwrite=true, no queued or running Task directory is touched, and no symbolic link is moved or copied. Answers each move done.',
        input: Type.Object(
          {
            moves: Type.Array(Type.Object({ from: Type.String({ minLength: 1 }), to: Type.String({ minLength: 1 }) }, { additionalProperties: false }), { minItems: 1, maxItems: WORKSPACE_LIMITS.deleteBatch }),
            copy: Type.Optional(Type.Boolean({ default: false, description: 'Copy instead of move' })),
            overwrite: Type.Optional(Type.Boolean({ default: false, description: 'Replace a destination that exists' })),
          },
          { additionalProperties: false },
        ),
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
        run: async ({ moves, copy = false, overwrite = false }) => ok(await moveEntries(env.workspace, moves, { copy, overwrite }, tasks)),
      }),
    ],
  }),
});
