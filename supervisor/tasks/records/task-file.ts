import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openRegularFileWithStat, openRegularFileWithStatSync, UnsafeFileError } from '../../../workers/safe-file.js';
import { PermissionError } from '../../../core/errors.js';

/** The business failure for a Task file that is not a regular file; the Task directory is named by its ID. */
export function refusedTaskFile(err: UnsafeFileError): InstanceType<typeof PermissionError> {
  const file = basename(err.path);
  const taskId = basename(dirname(err.path));
  return new PermissionError(`${file} of ${taskId} is not a regular file (${err.kind}); it is not read`);
}

/**
 * Opens a file of a Task directory the way the service reads anything a Task could have made:
 * no symbolic link followed, no wait on a FIFO, regular files only. A missing file answers
 * undefined; one that is not a regular file is a PermissionError (a business failure, so Jobs and
 * followers report it as such); other I/O errors are thrown as they are. The stat is the one the
 * check was made with.
 */
export async function openTaskFile(path: string): Promise<{ handle: FileHandle; stat: Stats } | undefined> {
  try {
    return await openRegularFileWithStat(path);
  } catch (err) {
    return missingOrThrow(err);
  }
}

/**
 * `openTaskFile`, synchronous, answering a file descriptor (the caller closes it). For the live
 * Task's reads on the way from a change to its followers: each thread-pool round trip there waits
 * for a core, and on a loaded machine seven of them in a row cost more than the reads themselves.
 */
export function openTaskFileSync(path: string): { fd: number; stat: Stats } | undefined {
  try {
    return openRegularFileWithStatSync(path);
  } catch (err) {
    return missingOrThrow(err);
  }
}

/** A missing file is undefined; one that is not a regular file a PermissionError; the rest as they are. */
function missingOrThrow(err: unknown): undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  if (err instanceof UnsafeFileError) throw refusedTaskFile(err);
  throw err;
}
