import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Type } from '../vendor/typebox.js';
import type { ProgressEvent } from '../schemas/events.js';
import { ok } from '../schemas/job-response.js';
import { declareCapability } from './capability-contract.js';
import { ValueError } from '../core/errors.js';
import { defineJob, type JobContext } from '../core/job.js';
import { removeStagedFile, takeStagedFile } from '../supervisor/workspace/staged-input.js';
import { parseTaskId } from '../supervisor/tasks/records/task-ids.js';
import { STATE_DIR } from '../supervisor/common/token-store.js';
import { applySnapshot, type TaskGuard } from '../supervisor/snapshots/apply-snapshot.js';
import { MAX_DELETIONS } from '../supervisor/snapshots/snapshot-rules.js';
import { taskGuardOf } from '../supervisor/snapshots/task-guard.js';
import { SyncResult } from '../schemas/plugins.js';

const SyncInput = Type.Object(
  {
    path: Type.Optional(Type.String({ minLength: 1, description: 'Staged .tar.gz (POST /files) of <task_type>/<task_id>/... directories, each with a terminal status.json' })),
    deletions: Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_DELETIONS, uniqueItems: true, default: [], description: 'Task IDs whose directories are deleted' }),
  },
  { additionalProperties: false },
);

/** Scratch areas (unpacked archives, backups) live here, on the workspace's file system. */
const WORK_DIR = 'sync-work';

const phase = (name: string, percentage: number): ProgressEvent => ({ kind: 'progress', name, started_at: new Date().toISOString(), finished_at: null, percentage });

function parseDeletions(ids: readonly string[]): Array<{ taskId: string; taskType: string }> {
  return ids.map((taskId) => {
    const parts = parseTaskId(taskId);
    if (!parts) throw new ValueError(`deletions: ${JSON.stringify(taskId)} is not a valid Task ID (<task_type>#<registration_name>#<task_name>)`);
    return { taskId, taskType: parts.type };
  });
}

/** One `sync_tasks` call: unpack and check everything in a scratch area, then apply all at once. */
async function syncTasks(workspace: string, guard: TaskGuard, args: { path?: string; deletions: string[] }, ctx: JobContext) {
  if (args.path === undefined && args.deletions.length === 0) throw new ValueError('nothing to do: give path (a staged snapshot archive) and/or deletions');
  const deletions = parseDeletions(args.deletions);
  const scratch = join(workspace, STATE_DIR, WORK_DIR, randomBytes(8).toString('hex'));
  await mkdir(scratch, { recursive: true, mode: 0o700 });
  try {
    let snapshot = null;
    if (args.path !== undefined) {
      await ctx.emit(phase('validate archive', 0));
      const archive = join(scratch, 'archive.tar.gz');
      await takeStagedFile(workspace, args.path, archive);
      // tar (~85 KB of code, with node:assert) loads with the first snapshot, not at every start.
      const { unpackSnapshot } = await import('../supervisor/snapshots/unpack-snapshot.js');
      snapshot = await unpackSnapshot(archive, join(scratch, 'unpacked'));
      const both = deletions.find((d) => snapshot!.tasks.has(d.taskId));
      if (both) throw new ValueError(`Task ${both.taskId} is both in the archive and in deletions`);
    }
    ctx.signal.throwIfAborted(); // last point where leaving changes nothing
    await ctx.emit(phase('apply', 50));
    const result = await applySnapshot({ workspace, scratch, snapshot, deletions, guard });
    if (args.path !== undefined) await removeStagedFile(workspace, args.path);
    return result;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Leftover scratch areas of a crash. One holding `backup/` may hold Task directories that were
 * moved aside mid-apply: it is kept and reported, never deleted blindly.
 */
async function sweep(workspace: string): Promise<void> {
  const root = join(workspace, STATE_DIR, WORK_DIR);
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const backups = await readdir(join(root, name, 'backup')).catch(() => [] as string[]);
    if (backups.length) console.warn(`taskyard: ${join(root, name, 'backup')} holds Task directories moved aside by an interrupted sync_tasks; restore them by hand`);
    else await rm(join(root, name), { recursive: true, force: true });
  }
}

/** `sync_tasks`: task snapshots between machines. */
export const snapshotsCapability = declareCapability({
  name: 'snapshots',
  needs: ['tasks'],
  build: async (env, { tasks }) => {
    const guard = taskGuardOf(tasks);
    await sweep(env.workspace);
    let queue: Promise<unknown> = Promise.resolve();
    return {
      jobs: [
        defineJob({
          name: 'sync_tasks',
          output: SyncResult,
          description:
            'Applies a task snapshot and/or deletes Task directories. path: a staged .tar.gz (POST /files) of <task_type>/<task_id>/... ' +
            'directories, each with a terminal status.json; the whole archive is validated (regular files only, no absolute or escaping ' +
            'names, no duplicates, bounded size) before the workspace changes, and directories are replaced all-or-nothing. ' +
            `deletions: up to ${MAX_DELETIONS} Task IDs. Active Tasks are never replaced or deleted. Answers {applied, deleted}.`,
          input: SyncInput,
          run: async (args, ctx) => {
            // One sync at a time: two snapshots touching the same Task must not interleave.
            const run = queue.then(() => syncTasks(env.workspace, guard, args, ctx));
            queue = run.catch(() => undefined);
            return ok(await run);
          },
        }),
      ],
    };
  },
});
