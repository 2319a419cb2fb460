import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

// Only node built-ins here: the task runner bundle uses this module too.

/**
 * O_NOFOLLOW: a symbolic link in the last component fails with ELOOP instead of being followed.
 * O_NONBLOCK: opening a FIFO does not wait for a writer (a blocking open holds a libuv thread for
 * good, and four of them stall every file operation of the process).
 */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** What a refused file is, in words for messages. */
function describeKind(stat: Stats): string {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'named pipe';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice()) return 'character device';
  if (stat.isBlockDevice()) return 'block device';
  return 'special file';
}

/** Why a Task file was refused. */
export class UnsafeFileError extends Error {
  readonly path: string;
  readonly reason: 'symlink' | 'not-regular';
  /** What was found instead of a regular file: `symbolic link`, `named pipe`, `directory`, ... */
  readonly kind: string;

  constructor(path: string, reason: 'symlink' | 'not-regular', kind: string) {
    super(`${path} is not a regular file (${kind})`);
    this.name = 'UnsafeFileError';
    this.path = path;
    this.reason = reason;
    this.kind = kind;
  }
}

/** ELOOP under O_NOFOLLOW means the last component is a symbolic link. */
const asRefusal = (path: string, err: unknown): unknown =>
  (err as NodeJS.ErrnoException).code === 'ELOOP' ? new UnsafeFileError(path, 'symlink', 'symbolic link') : err;

function requireRegular(path: string, stat: Stats): void {
  if (!stat.isFile()) throw new UnsafeFileError(path, 'not-regular', describeKind(stat));
}

/**
 * Opens `path` read-only with O_NOFOLLOW | O_NONBLOCK, then fstat: anything but a regular file is
 * closed and refused (UnsafeFileError). ENOENT etc. are thrown as the usual errno errors. The
 * check is made on the descriptor, so what was checked is what gets read.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, FLAGS).catch((err: unknown) => Promise.reject(asRefusal(path, err)));
  try {
    requireRegular(path, await handle.stat());
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The same, synchronous, answering a file descriptor (for the runner). */
export function openRegularFileSync(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    throw asRefusal(path, err);
  }
  try {
    requireRegular(path, fstatSync(fd));
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}
