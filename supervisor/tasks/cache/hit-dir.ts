import { copyFile, constants, link, lstat, mkdir, open, realpath, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { isObject } from '../../../core/is-object.js';
import { TASK_FILES, toJsonText } from '../../../core/task-record/record-files.js';
import type { TaskMetadata, TaskStatus } from '../../../schemas/tasks.js';
import { placeStagedDir, stagingDirFor } from '../records/run-dir.js';

/** The marker a cache hit carries in its directory: which Task and run its result came from. */
export const CACHE_HIT_FILE = 'cache-hit.json';

/** The cached Task a hit is made from: its directory and metadata. */
export interface HitSource {
  readonly task_id: string;
  readonly run_id: string;
  readonly dir: string;
  readonly metadata: TaskMetadata;
}

/** The new Task: its directory, its status (succeeded, with the cached result) and its metadata. */
export interface HitTarget {
  readonly dir: string;
  readonly status: TaskStatus;
  readonly metadata: TaskMetadata;
}

/** A relative artifact path that stays inside its Task directory, or null. */
function insidePath(path: unknown): string | null {
  if (typeof path !== 'string' || path === '' || path.includes('\0') || isAbsolute(path)) return null;
  const clean = normalize(path);
  return clean === '..' || clean.startsWith(`..${sep}`) ? null : clean;
}

/**
 * Links one artifact of the source into the staging directory at the same relative path (a copy
 * where a hard link cannot be made: another file system, a link limit), so its sha256 holds and
 * deleting the source keeps it. The source must be a regular file of the recorded size inside
 * the source directory (no link followed out of it); anything else is an error: the hit is
 * abandoned and the submit runs.
 */
async function linkArtifact(sourceDir: string, realSource: string, staging: string, path: string, size: unknown): Promise<void> {
  const from = join(sourceDir, path);
  const stat = await lstat(from);
  const real = await realpath(from);
  if (!stat.isFile() || stat.size !== size || !real.startsWith(`${realSource}${sep}`)) throw new Error(`artifact ${path} is no longer the file its Task recorded`);
  const to = join(staging, path);
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(real, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw err;
    await copyFile(real, to, constants.COPYFILE_EXCL);
  }
}

/** Creates `file` with `text`; `durable`: flushed to disk before this resolves. */
async function createFile(file: string, text: string, durable: boolean): Promise<void> {
  const handle = await open(file, 'wx', 0o644);
  try {
    await handle.writeFile(text);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes the new Task's directory whole under a hidden name, then moves it into place (replacing a
 * finished Task of the same fixed name): the artifacts, a one-line log, an empty progress record,
 * the marker, metadata.json and the succeeded status.json. On failure nothing is left and the
 * error is thrown.
 */
export async function createHitDir(source: HitSource, target: HitTarget): Promise<void> {
  const { status } = target;
  const staging = stagingDirFor(target.dir, status.task_type, status.run_id);
  await mkdir(staging);
  try {
    const realSource = await realpath(source.dir);
    const artifacts = source.metadata.output_params['artifacts'];
    // Two names may record the same file: it is linked once.
    const linked = new Set<string>();
    for (const artifact of Object.values(isObject(artifacts) ? artifacts : {})) {
      const path = isObject(artifact) ? insidePath(artifact['path']) : null;
      if (path === null) throw new Error('an artifact of the cached Task has no path inside its directory');
      if (linked.has(path)) continue;
      await linkArtifact(source.dir, realSource, staging, path, (artifact as Record<string, unknown>)['size']);
      linked.add(path);
    }
    // Nothing can see the staging directory: its files are written at once, and the records that
    // mean something after a machine crash (as a run's: metadata, the terminal status) flushed
    // together before it appears whole.
    const files: Array<[string, string, boolean]> = [
      [TASK_FILES.log, `answered from the result cache: Task ${source.task_id} (run ${source.run_id})\n`, false],
      [TASK_FILES.events, '', false],
      [CACHE_HIT_FILE, toJsonText({ source_task_id: source.task_id, source_run_id: source.run_id }), true],
      [TASK_FILES.metadata, toJsonText(target.metadata), true],
      [TASK_FILES.status, toJsonText(status), true],
    ];
    await Promise.all(files.map(([name, text, durable]) => createFile(join(staging, name), text, durable)));
    await placeStagedDir(staging, target.dir, status.run_id);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
