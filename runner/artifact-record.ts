import { closeSync, createReadStream, fstatSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ArtifactRecord } from '../schemas/tasks.js';
import { openRegularFileSync, UnsafeFileError } from '../workers/safe-file.js';
import { TaskError } from './task-sdk.js';
import { importModule } from './import-module.js';

/** Resolves `relativePath` inside the Task directory, symlinks included; anything else is refused. */
export function resolveInsideTaskDir(dir: string, relativePath: string): string {
  if (typeof relativePath !== 'string' || !relativePath || relativePath.includes('\0') || isAbsolute(relativePath)) {
    throw new TaskError('ValueError', `artifact path must be a non-empty path relative to the task directory: ${JSON.stringify(relativePath)}`);
  }
  let real: string;
  try {
    real = realpathSync(resolve(dir, relativePath));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TaskError('FileNotFoundError', `artifact file not found: ${relativePath}`);
    throw err;
  }
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

/** The artifact record of a file under the Task directory: its path there, size and sha256. */
export async function artifactRecordOf(dir: string, relativePath: string): Promise<ArtifactRecord> {
  const file = resolveInsideTaskDir(dir, relativePath);
  const { fd, size } = openArtifact(file, relativePath);
  return { path: relative(realpathSync(dir), file).split(sep).join('/'), size, sha256: await sha256Of(fd, size) };
}
