import { close as closeCallback, closeSync, constants, fstat as fstatCallback, fstatSync, lstatSync, open as openCallback, openSync, read as readCallback, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';

// Only node built-ins here: the task runner bundle uses this module too.

/**
 * O_NOFOLLOW: a symbolic link in the last component fails with ELOOP instead of being followed.
 * O_NONBLOCK: opening a FIFO does not wait for a writer (a blocking open holds a libuv thread for
 * good, and four of them stall every file operation of the process).
 */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** What is at a path, in words for messages (`named pipe`, `directory`, ...). */
export function describeKind(stat: Stats): string {
  if (stat.isFile()) return 'regular file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symbolic link';
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

/**
 * ELOOP under O_NOFOLLOW means the last component is a symbolic link; ENXIO on a read-only open,
 * a socket (or a device without a driver), which no descriptor can be had for: named from lstat.
 */
function asRefusal(path: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return new UnsafeFileError(path, 'symlink', 'symbolic link');
  if (code !== 'ENXIO') return err;
  let kind = 'socket';
  try {
    kind = describeKind(lstatSync(path));
  } catch {
    // Gone since: still not something to read.
  }
  return new UnsafeFileError(path, 'not-regular', kind);
}

function requireRegular(path: string, stat: Stats): void {
  if (!stat.isFile()) throw new UnsafeFileError(path, 'not-regular', describeKind(stat));
}

/** `openRegularFile`, also answering the stat the check was made with (saves a second fstat). */
export async function openRegularFileWithStat(path: string): Promise<{ handle: FileHandle; stat: Stats }> {
  const handle = await open(path, FLAGS).catch((err: unknown) => Promise.reject(asRefusal(path, err)));
  try {
    const stat = await handle.stat();
    requireRegular(path, stat);
    return { handle, stat };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Opens `path` read-only with O_NOFOLLOW | O_NONBLOCK, then fstat: anything but a regular file is
 * closed and refused (UnsafeFileError). ENOENT etc. are thrown as the usual errno errors. The
 * check is made on the descriptor, so what was checked is what gets read.
 */
export async function openRegularFile(path: string): Promise<FileHandle> {
  return (await openRegularFileWithStat(path)).handle;
}

const openFd = promisify(openCallback);
const fstatFd = promisify(fstatCallback);
const closeFd = promisify(closeCallback);
const readFd = (fd: number, buf: Buffer, at: number) =>
  new Promise<number>((resolve, reject) => readCallback(fd, buf, at, buf.length - at, at, (err, n) => (err ? reject(err) : resolve(n))));

/**
 * The whole content of a small regular file (a record), opened as above. Plain descriptors, not a
 * FileHandle: measured (bench/task-files.ts) as fast as `readFile`, where a FileHandle costs more.
 */
export async function readRegularFile(path: string): Promise<Buffer> {
  const fd = await openFd(path, FLAGS).catch((err: unknown) => Promise.reject(asRefusal(path, err)));
  try {
    const stat = await fstatFd(fd);
    requireRegular(path, stat);
    const buf = Buffer.allocUnsafe(stat.size);
    let filled = 0;
    while (filled < buf.length) {
      const n = await readFd(fd, buf, filled);
      if (n === 0) break;
      filled += n;
    }
    return buf.subarray(0, filled);
  } finally {
    await closeFd(fd);
  }
}

/** Opens with `flags` (which carry O_NOFOLLOW | O_NONBLOCK), then refuses anything but a regular file. */
function openCheckedSync(path: string, flags: number, mode?: number): { fd: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags, mode);
  } catch (err) {
    // Under O_NONBLOCK a FIFO without a reader refuses a writer with ENXIO (so does a socket).
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') throw new UnsafeFileError(path, 'not-regular', 'named pipe or socket');
    throw asRefusal(path, err);
  }
  try {
    const stat = fstatSync(fd);
    requireRegular(path, stat);
    return { fd, stat };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The same, synchronous, answering a file descriptor (for the runner). */
export function openRegularFileSync(path: string): number {
  return openCheckedSync(path, FLAGS).fd;
}

/** `openRegularFileSync` with the stat its check made (the caller closes the descriptor). */
export function openRegularFileWithStatSync(path: string): { fd: number; stat: Stats } {
  return openCheckedSync(path, FLAGS);
}

/**
 * Opens (creating if needed, mode 0644) `path` for appending, with the same guarantees: no link
 * followed, no wait on a FIFO, regular files only. For the log a Task's output goes to: a link
 * planted there must not make the service write outside the workspace.
 */
export function openAppendFileSync(path: string): number {
  return openCheckedSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644).fd;
}
