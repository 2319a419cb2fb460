import { closeSync, fsync, lstatSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import type { TaskStatus } from '../../../schemas/tasks.js';
import { isTempFile, TASK_FILES, toJsonText, writeAllSync } from '../../../core/task-record/record-files.js';
import { PermissionError } from '../../../core/errors.js';
import { isSafeDir } from './records.js';
import { parseTaskId } from './task-ids.js';
import type { SpareRunDirs } from './spare-run-dirs.js';

/** Hidden names in a type directory: a run being created, and a finished Task being replaced. */
const NEW_PREFIX = '.new-';
const OLD_PREFIX = '.old-';
const fsyncAsync = promisify(fsync);

/** Refuses a type directory that is a symlink or a file: writing through it could leave the workspace. */
function ensureTypeDir(typeDir: string, type: string): void {
  const stat = lstatSync(typeDir, { throwIfNoEntry: false });
  if (stat && !stat.isDirectory()) throw new PermissionError(`${type} in the workspace is not a plain directory`);
  if (!stat) mkdirSync(typeDir, { recursive: true });
}

/**
 * Creates the directory of a new run whole, or leaves nothing: its queued `status.json` and empty
 * `events.jsonl` are written under a hidden name, which is then renamed into place (the rename of
 * the directory is what makes the record appear whole, so the status needs no temp file of its
 * own). A finished Task it replaces (fixed task_name) is moved aside first and removed
 * afterwards, so a failure at any step (a full disk) leaves the old Task exactly as it was.
 *
 * The hidden directory is a spare made ahead of need when one is ready (see spare-run-dirs.ts:
 * each creation costs 0.15-0.5 ms here), else it is made now. These steps are synchronous: each
 * is one metadata operation on a name made here (nothing a Task planted can make it block), well
 * under a millisecond, while as thread-pool round trips, five in a row, they cost a submit's
 * start 5 ms and more on a loaded machine.
 *
 * Answers `durable`: the fsync of the record, and the removal of the replaced Task. The run starts
 * while that fsync runs (it cost a few ms of every submit's start); the submit is answered after
 * it. `durable` never rejects: an fsync that fails after the record is in place is logged, since
 * the record and its run exist by then.
 */
export function createRunDir(dir: string, status: TaskStatus, spares?: SpareRunDirs): { durable: Promise<void> } {
  const typeDir = dirname(dir);
  ensureTypeDir(typeDir, status.task_type);
  const spare = spares?.take();
  const staging = spare?.path ?? join(typeDir, `${NEW_PREFIX}${status.run_id}`);
  let record = spare?.record;
  try {
    if (record === undefined) {
      mkdirSync(staging);
      record = openSync(join(staging, TASK_FILES.status), 'wx', 0o644);
      closeSync(openSync(join(staging, TASK_FILES.events), 'wx', 0o644));
    }
    writeAllSync(record, toJsonText(status));
    const aside = renameInto(staging, dir, join(typeDir, `${OLD_PREFIX}${status.run_id}`));
    return { durable: settle(record, aside, status.task_id) };
  } catch (err) {
    if (record !== undefined) closeQuietly(record);
    try {
      rmSync(staging, { recursive: true, force: true });
    } catch {
      // Left for the next start's sweep (a hidden staging name).
    }
    // The Task's type directory is on another file system than the spares: made here instead.
    if (spare && (err as NodeJS.ErrnoException).code === 'EXDEV') return createRunDir(dir, status);
    throw err;
  }
}

/**
 * For a directory made whole elsewhere (a result cache hit): the hidden staging path beside `dir`
 * (its type directory checked or made, as for a run), and then its move into place, replacing a
 * finished Task there the way createRunDir does. A leftover staging directory is swept at start.
 */
export function stagingDirFor(dir: string, type: string, runId: string): string {
  ensureTypeDir(dirname(dir), type);
  return join(dirname(dir), `${NEW_PREFIX}${runId}`);
}

/** Moves `staging` (stagingDirFor) into place as `dir`; resolves once a Task it replaced is removed. */
export async function placeStagedDir(staging: string, dir: string, runId: string): Promise<void> {
  const aside = renameInto(staging, dir, join(dirname(dir), `${OLD_PREFIX}${runId}`));
  if (aside) await rm(aside, { recursive: true, force: true }).catch((err: unknown) => console.error(`taskyard: the replaced run left ${aside}; it is removed at the next start`, err));
}

/** Renames `staging` onto `dir`, moving a finished Task there aside first; answers where it went. */
function renameInto(staging: string, dir: string, asidePath: string): string | undefined {
  try {
    renameSync(staging, dir);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
  }
  renameSync(dir, asidePath);
  try {
    renameSync(staging, dir);
  } catch (again) {
    try {
      renameSync(asidePath, dir);
    } catch {
      // The old Task stays aside; the next start's sweep looks at it.
    }
    throw again;
  }
  return asidePath;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already unusable: nothing more to release.
  }
}

async function settle(record: number, aside: string | undefined, id: string): Promise<void> {
  try {
    await fsyncAsync(record);
  } catch (err) {
    console.error(`taskyard: the queued record of ${id} is in place, but could not be flushed to disk`, err);
  } finally {
    closeQuietly(record);
  }
  if (aside) await rm(aside, { recursive: true, force: true }).catch((err: unknown) => console.error(`taskyard: the replaced run left ${aside}; it is removed at the next start`, err));
}

/**
 * A Task directory holding nothing a Job could show: only temp files of interrupted writes, or
 * nothing, or a new run's files still empty (a machine that stopped between the rename of a new
 * run's directory and the flush of its record; the submit was not answered).
 */
async function isHollow(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => null);
  if (names === null) return false;
  if (names.every(isTempFile)) return true;
  const created = new Set<string>([TASK_FILES.status, TASK_FILES.events]);
  if (!names.every((name) => created.has(name) || isTempFile(name))) return false;
  const sizes = await Promise.all(names.filter((name) => created.has(name)).map((name) => lstat(join(dir, name)).then((s) => (s.isFile() ? s.size : -1), () => -1)));
  return sizes.every((size) => size === 0);
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
