import { lstat, mkdir } from 'node:fs/promises';
import { describeKind } from '../../workers/safe-file.js';

/**
 * The service's private state (`<workspace>/.taskyard/…`) is written by the service only, but
 * the workspace is shared with Tasks and people: what sits at a private path is checked before it
 * is used. Files are read with the non-blocking, regular-file-only opener of Task files
 * (workers/safe-file.ts); directories are checked here.
 */

/** Something at a private path is not what the service keeps there: the message names it and the fix. */
export class PrivateStateError extends Error {
  override name = 'PrivateStateError';
}

/**
 * Makes the private directory `dir` (and its parents) unless it exists; anything else already
 * there (a plain file, a link, a pipe, also at a parent) stops the start with a message that says
 * what is in the way and how to fix it, instead of a raw EEXIST or ENOTDIR.
 */
export async function ensurePrivateDir(dir: string, mode = 0o700): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
  }
  const found = await lstat(dir).catch(() => undefined);
  if (found?.isDirectory()) return;
  const what = found ? `a ${describeKind(found)}` : 'missing: a parent of it is not a directory';
  throw new PrivateStateError(`${dir} must be a directory of the service's private state, but it is ${what}; remove or move it away and start again`);
}
