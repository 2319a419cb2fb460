import { cp, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FileExistsError, FileNotFoundError, PermissionError, ValueError } from '../../core/errors.js';
import type { MovedEntry } from '../../schemas/workspace.js';
import { isTaskIdOfType } from '../tasks/records/task-ids.js';
import { resolveClientPath, resolveEntryPath, type WorkspacePath } from './safe-path.js';

/** One move (or copy) as asked. */
export interface Move {
  readonly from: string;
  readonly to: string;
}


/** What moves need of the Tasks: whether a Task's directory is in use. */
export interface ActiveTasks {
  isActive(id: string): Promise<boolean>;
}

type Entry = WorkspacePath & { name: string };

/** The Task whose directory holds `relative` (`<type>/<task_id>/...`), if any. */
function taskOf(relative: string): string | null {
  const [type = '', id] = relative.split('/');
  return id !== undefined && isTaskIdOfType(id, type) ? id : null;
}

/**
 * A symbolic link moved or copied elsewhere may point somewhere else from there (out of the
 * workspace, even): trees that hold one are refused, and a link itself is never moved.
 */
async function refuseLinks(real: string, shown: string): Promise<void> {
  const info = await lstat(real);
  if (info.isSymbolicLink()) throw new PermissionError(`symbolic links are not moved or copied: ${shown}`);
  if (!info.isDirectory()) {
    if (!info.isFile()) throw new PermissionError(`only files and directories are moved or copied: ${shown}`);
    return;
  }
  for (const name of await readdir(real)) await refuseLinks(join(real, name), `${shown}/${name}`);
}

async function checked(root: string, move: Move, overwrite: boolean, tasks: ActiveTasks): Promise<{ from: Entry; to: Entry }> {
  const from = await resolveEntryPath(root, move.from);
  const to = await resolveEntryPath(root, move.to);
  if (from === null || to === null) throw new PermissionError('the workspace root cannot be moved, copied or replaced');
  if (!from.exists) throw new FileNotFoundError(`no such file or directory: ${move.from}`);
  if (to.relative === from.relative || to.relative.startsWith(`${from.relative}/`)) throw new ValueError(`cannot move or copy ${move.from} into itself (${move.to})`);
  if (to.exists && !overwrite) throw new FileExistsError(`${move.to} exists; pass overwrite: true to replace it`);
  for (const path of [from.relative, to.relative]) {
    const task = taskOf(path);
    if (task && (await tasks.isActive(task))) throw new PermissionError(`${path} is in the directory of ${task}, which is queued or running`);
  }
  await refuseLinks(from.real, move.from);
  return { from, to };
}

/**
 * Moves (or copies) workspace entries: a staged upload becomes `data/train.csv`. Every move is
 * checked before anything changes (paths inside the workspace and outside its private
 * directory, like delete_entries; the source exists; the destination is free unless
 * `overwrite`; no active Task's directory; no symbolic link), then each is done in order, its
 * destination's missing parent directories made. Directories move whole; a copy copies the tree.
 */
export async function moveEntries(root: string, moves: readonly Move[], opts: { copy: boolean; overwrite: boolean }, tasks: ActiveTasks): Promise<MovedEntry[]> {
  const planned: Array<{ from: Entry; to: Entry }> = [];
  for (const move of moves) planned.push(await checked(root, move, opts.overwrite, tasks));
  const done: MovedEntry[] = [];
  for (const { from, to } of planned) {
    const kind = (await lstat(from.real)).isDirectory() ? 'directory' : 'file';
    // The parent is resolved again (and made) just before use: it must still lead inside.
    const parent = await resolveClientPath(root, dirname(to.relative) === '.' ? '' : dirname(to.relative));
    await mkdir(parent.real, { recursive: true });
    const target = join(parent.real, to.name);
    if (opts.overwrite) await rm(target, { recursive: true, force: true });
    if (opts.copy) await cp(from.real, target, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    else await rename(from.real, target);
    done.push({ from: from.relative, to: to.relative, kind });
  }
  return done;
}
