import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Why a Task file was refused. */
export class UnsafeFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'symlink' | 'not-regular',
  ) {
    super(`${path} is ${reason === 'symlink' ? 'a symbolic link' : 'not a regular file'}; it is not read`);
    this.name = 'UnsafeFileError';
  }
}

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function refusal(path: string, err: unknown): unknown {
  return (err as NodeJS.ErrnoException).code === 'ELOOP' ? new UnsafeFileError(path, 'symlink') : err;
}

/**
 * Opens `path` read-only without following a symbolic link and without blocking on a FIFO or a
 * device, then refuses anything but a regular file (UnsafeFileError). Other errors (ENOENT) are
 * thrown as they are.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    throw refusal(path, err);
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new UnsafeFileError(path, 'not-regular');
  }
  return handle;
}

/** The same, synchronous, answering a file descriptor. */
export function openRegularFileSync(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    throw refusal(path, err);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new UnsafeFileError(path, 'not-regular');
  }
  return fd;
}
