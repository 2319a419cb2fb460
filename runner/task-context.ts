import { closeSync, createReadStream, fstatSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ArtifactRecord } from '../schemas/tasks.js';
import { openRegularFileSync, UnsafeFileError } from '../workers/safe-file.js';
import type { StatusPublisher } from './status-publisher.js';
import { TaskError, type TaskContext, type TaskLogger } from './task-sdk.js';
import { nowIso, writeAllSync } from '../core/task-record/record-files.js';
import { importModule } from './import-module.js';

/** Who the run is and where its files are, as the runner learned it from its environment. */
export interface ContextIdentity {
  workspace: string;
  dir: string;
  registration: string;
  taskId: string;
  runId: string;
  createdAt: string;
  /** File descriptor of task.log opened for appending (shared with stdout and stderr). */
  logFd: number;
}

/** Resolves `relativePath` inside the Task directory, symlinks included; anything else is refused. */
export function resolveInsideTaskDir(dir: string, relativePath: string): string {
  if (typeof relativePath !== 'string' || !relativePath || relativePath.includes('\0') || isAbsolute(relativePath)) {
    throw new TaskError('ValueError', `artifact path must be a non-empty path relative to the task directory: ${JSON.stringify(relativePath)}`);
  }
  const real = realpathSync(resolve(dir, relativePath));
  const rel = relative(realpathSync(dir), real);
  if (!rel || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new TaskError('PermissionError', `artifact path escapes the task directory: ${relativePath}`);
  }
  return real;
}

/** `/proc/self/fd/N`: the path the descriptor really points to (undefined without /proc). */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Opens the resolved artifact without following a link and without waiting on a FIFO, regular
 * files only, and checks that the descriptor is still the resolved file (a directory on the way
 * may have been swapped for a link since it was resolved). Size and hash then come from this one
 * descriptor, so what was checked is what gets recorded.
 */
function openArtifact(real: string, shown: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openRegularFileSync(real);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new TaskError('ValueError', `artifact is not a regular file (${err.kind}): ${shown}`);
    throw err;
  }
  try {
    if ((openedPath(fd) ?? real) !== real) throw new TaskError('PermissionError', `artifact path changed while it was opened: ${shown}`);
    return { fd, size: fstatSync(fd).size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Hashes the first `size` bytes of the open file (those the record's size counts); closes it. */
async function sha256Of(fd: number, size: number): Promise<string> {
  // Loaded on first use: node:crypto costs every Task start several ms, and most record no artifact.
  const { createHash } = process.getBuiltinModule?.('node:crypto') ?? (await importModule<typeof import('node:crypto')>('node:crypto'));
  const hash = createHash('sha256');
  if (size === 0) closeSync(fd);
  else for await (const chunk of createReadStream('', { fd, start: 0, end: size - 1, autoClose: true })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function makeLogger(fd: number): TaskLogger {
  const write = (level: string) => (message: string) => {
    writeAllSync(fd, `${nowIso()} ${level} ${message}\n`);
  };
  return Object.freeze({ debug: write('DEBUG'), info: write('INFO'), warn: write('WARNING'), error: write('ERROR') });
}

/**
 * Builds the frozen TaskContext of one run. Artifacts registered through it are collected in
 * `artifacts` and merged into the output by the runner.
 */
export function createTaskContext(id: ContextIdentity, publisher: StatusPublisher, artifacts: Map<string, ArtifactRecord>): TaskContext {
  let current: ReturnType<StatusPublisher['beginStep']> | undefined;
  const ctx: TaskContext = {
    workspace_path: id.workspace,
    registration_name: id.registration,
    task_id: id.taskId,
    run_id: id.runId,
    created_at: id.createdAt,
    logger: makeLogger(id.logFd),
    async step(name, fn) {
      if (typeof name !== 'string' || !name) throw new TaskError('ValueError', 'step name must be a non-empty string');
      const outer = current;
      const step = publisher.beginStep(name);
      current = step;
      try {
        return await fn();
      } finally {
        publisher.endStep(step);
        current = outer;
      }
    },
    progress(percentage) {
      if (typeof percentage !== 'number' || !(percentage >= 0 && percentage <= 100)) {
        throw new TaskError('ValueError', `progress percentage must be a number from 0 to 100, got ${String(percentage)}`);
      }
      // Progress outside any step gets an implicit step named after the Task.
      current ??= publisher.beginStep(id.registration);
      publisher.setPercentage(current, percentage);
    },
    async artifact(name, relativePath) {
      if (typeof name !== 'string' || !name) throw new TaskError('ValueError', 'artifact name must be a non-empty string');
      const file = resolveInsideTaskDir(id.dir, relativePath);
      const { fd, size } = openArtifact(file, relativePath);
      const record: ArtifactRecord = { path: relative(realpathSync(id.dir), file).split(sep).join('/'), size, sha256: await sha256Of(fd, size) };
      artifacts.set(name, record);
      return record;
    },
  };
  return Object.freeze(ctx);
}
