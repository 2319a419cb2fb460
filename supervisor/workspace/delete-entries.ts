import { lstat, realpath, rm, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DeletedEntry } from '../../schemas/workspace.js';
import { PermissionError } from '../../core/errors.js';
import { resolveEntryPath, type WorkspacePath } from './safe-path.js';

type Target = WorkspacePath & { name: string };

/**
 * Removes one resolved entry. The parent is resolved again right before removal and must still
 * be the same real directory, so a component swapped for a link since resolution is refused
 * rather than followed. A link is removed itself, never its target.
 */
async function deleteOne(target: Target): Promise<DeletedEntry | null> {
  const parent = dirname(target.real);
  if ((await realpath(parent).catch(() => null)) !== parent) {
    if (!target.exists) return null;
    throw new PermissionError(`path changed during deletion: ${target.relative}`);
  }
  const info = await lstat(target.real).catch(() => null);
  if (!info) return null;
  if (info.isDirectory()) {
    // rm never follows links inside the tree: it removes the links themselves.
    await rm(target.real, { recursive: true, force: true });
    return { deleted: target.relative, kind: 'directory' };
  }
  await unlink(target.real).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  return { deleted: target.relative, kind: 'file' };
}

/**
 * Deletes files and directories. Every path is checked before anything is removed, so one
 * refused path (escape, root, private directory) leaves the whole batch untouched. Missing
 * paths are skipped: the answer lists what was actually deleted.
 */
export async function deleteEntries(root: string, paths: readonly string[]): Promise<DeletedEntry[]> {
  const targets: Target[] = [];
  for (const path of paths) {
    const target = await resolveEntryPath(root, path);
    if (target === null) throw new PermissionError('the workspace root cannot be deleted');
    if (!targets.some((t) => t.relative === target.relative)) targets.push(target);
  }
  const deleted: DeletedEntry[] = [];
  for (const target of targets) {
    const done = await deleteOne(target);
    if (done) deleted.push(done);
  }
  return deleted;
}
