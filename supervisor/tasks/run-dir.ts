import { lstat, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TaskStatus } from '../../schemas/tasks.js';
import { isTempFile, TASK_FILES, writeJsonAtomic } from '../../workers/task-runner/record-files.js';
import { PermissionError } from '../../core/errors.js';
import { isSafeDir } from './records.js';
import { parseTaskId } from './task-ids.js';

/** Hidden names in a type directory: a run being created, and a finished Task being replaced. */
const NEW_PREFIX = '.new-';
const OLD_PREFIX = '.old-';

/** Refuses a type directory that is a symlink or a file: writing through it could leave the workspace. */
async function ensureTypeDir(typeDir: string, type: string): Promise<void> {
  const stat = await lstat(typeDir).catch(() => undefined);
  if (stat && !stat.isDirectory()) throw new PermissionError(`${type} in the workspace is not a plain directory`);
  if (!stat) await mkdir(typeDir, { recursive: true });
}

/**
 * Creates the directory of a new run whole, or leaves nothing: its queued `status.json` (durable)
 * and empty `events.jsonl` are written under a hidden name, which is then renamed into place. A
 * finished Task it replaces (fixed task_name) is moved aside first and removed afterwards, so a
 * failure at any step (a full disk) leaves the old Task exactly as it was.
 */
export async function createRunDir(dir: string, status: TaskStatus): Promise<void> {
  const typeDir = dirname(dir);
  await ensureTypeDir(typeDir, status.task_type);
  const staging = join(typeDir, `${NEW_PREFIX}${status.run_id}`);
  await mkdir(staging);
  let aside: string | undefined;
  try {
    await writeFile(join(staging, TASK_FILES.events), '');
    await writeJsonAtomic(join(staging, TASK_FILES.status), status);
    try {
      await rename(staging, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
      aside = join(typeDir, `${OLD_PREFIX}${status.run_id}`);
      await rename(dir, aside);
      await rename(staging, dir).catch(async (again: unknown) => {
        await rename(aside!, dir).catch(() => undefined);
        aside = undefined;
        throw again;
      });
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
  if (aside) await rm(aside, { recursive: true, force: true }).catch((err: unknown) => console.error(`taskyard: the replaced run left ${aside}; it is removed at the next start`, err));
}

/** A Task directory holding nothing a Job could show: only temp files of interrupted writes, or nothing. */
async function isHollow(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => null);
  return names !== null && names.every(isTempFile);
}

/**
 * Start-up, after the index scan: removes what interrupted submits and replacements left (hidden
 * run directories, and Task directories holding no record, only temp files or nothing). Only the
 * entries the scan found no record in are looked into (`[type, name]`), so a large workspace pays
 * no second listing. Answers how many were removed.
 */
export async function sweepInterruptedRuns(workspace: string, unindexed: ReadonlyArray<readonly [type: string, name: string]>): Promise<number> {
  let removed = 0;
  for (const [type, name] of unindexed) {
    const dir = join(workspace, type, name);
    if (!(await isSafeDir(dir))) continue;
    const leftover = name.startsWith(NEW_PREFIX) || name.startsWith(OLD_PREFIX) || (parseTaskId(name)?.type === type && (await isHollow(dir)));
    if (!leftover) continue;
    await rm(dir, { recursive: true, force: true }).then(
      () => removed++,
      (err: unknown) => console.error(`taskyard: cannot remove the leftover ${dir}`, err),
    );
  }
  return removed;
}
