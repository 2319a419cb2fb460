import { constants } from 'node:fs';
import { open, readlink, type FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { STATE_DIR } from '../../core/state-dir.js';
import { PreviewFailure } from './preview-failure.js';

/** An opened regular file and its size at open time. */
export interface OpenedFile {
  readonly handle: FileHandle;
  readonly size: number;
  /** A path that reopens this very file (`/proc/self/fd/N` on Linux), for APIs that want a path. */
  readonly reopenPath: string;
}

const isBelow = (dir: string, path: string) => path === dir || path.startsWith(dir + sep);

/**
 * Opens `real` (already resolved inside `root` by the supervisor) without following a link in its
 * last component, then checks what was actually opened: the path was resolved earlier, so a
 * component swapped for a symbolic link in between must not lead the read outside the workspace,
 * nor into its private `.taskyard/` directory.
 */
export async function openInside(root: string, real: string, shown: string): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new PreviewFailure('FileNotFoundError', `no such file: ${shown}`);
    if (code === 'ELOOP') throw new PreviewFailure('PermissionError', `path changed to a symbolic link: ${shown}`);
    if (code === 'EACCES' || code === 'EPERM') throw new PreviewFailure('PermissionError', `permission denied: ${shown}`);
    // A socket (or a device without a driver) cannot be opened at all: refused as a FIFO is below.
    if (code === 'ENXIO') throw new PreviewFailure('PermissionError', `not a regular file: ${shown}`);
    throw err;
  }
  try {
    const procPath = `/proc/self/fd/${handle.fd}`;
    const opened = await readlink(procPath).catch(() => null);
    if (opened !== null && !isBelow(root, opened)) throw new PreviewFailure('PermissionError', `path escapes the workspace: ${shown}`);
    if (opened !== null && isBelow(join(root, STATE_DIR), opened)) throw new PreviewFailure('PermissionError', `path is private to the service: ${shown}`);
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new PreviewFailure('IsADirectoryError', `is a directory: ${shown}`);
    if (!stat.isFile()) throw new PreviewFailure('PermissionError', `not a regular file: ${shown}`);
    return { handle, size: stat.size, reopenPath: opened === null ? real : procPath };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Reads up to `max` bytes from the start of the file. */
export async function readPrefix(handle: FileHandle, max: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(max);
  let filled = 0;
  while (filled < max) {
    const { bytesRead } = await handle.read(buffer, filled, max - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
