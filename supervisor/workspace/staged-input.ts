import { createHash } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileNotFoundError, HttpError, ValueError } from '../../core/errors.js';
import { isInside, resolveClientPath } from './safe-path.js';
import { STAGING_ROOT, stagedFilePath } from './staged-path.js';
import { UploadStaging } from './upload-staging.js';

/** A staged upload (`POST /files`) copied somewhere private, with the checksum of what was copied. */
export interface TakenFile {
  /** Workspace-relative staged path, normalised. */
  readonly relative: string;
  /** The upload's own file name (last path component). */
  readonly name: string;
  readonly sha256: string;
  readonly size: number;
}

/** Checks that `path` names a staged file (`tmp/[dir/]<sha256>/<name>`) and resolves it. */
async function locate(workspace: string, path: string): Promise<{ relative: string; real: string }> {
  let relative: string;
  try {
    relative = stagedFilePath(path);
  } catch (err) {
    // The check is shared with DELETE /files, whose 422 text speaks of removal: say it our way.
    if (err instanceof HttpError) throw new ValueError(`path ${JSON.stringify(path)} is not a staged upload (tmp/[dir/]<sha256>/<name>, as answered by POST /files)`);
    throw err;
  }
  const resolved = await resolveClientPath(workspace, relative);
  if (!resolved.exists) throw new FileNotFoundError(`staged file not found: ${relative} (upload it with POST /files first)`);
  // The staging directory itself must be the real `tmp`, not a link to somewhere else.
  const staging = await realpath(join(workspace, STAGING_ROOT)).catch(() => null);
  if (staging !== join(workspace, STAGING_ROOT) || !isInside(staging, resolved.real)) throw new ValueError(`not a staged file: ${relative}`);
  return { relative, real: resolved.real };
}

/**
 * Copies a staged upload to `destination` while hashing it, reading through one descriptor opened
 * without following links, so what is checked is exactly what is copied (a file swapped in
 * between cannot slip through). The content must still match the sha256 its staging directory is
 * named after.
 */
export async function takeStagedFile(workspace: string, path: string, destination: string): Promise<TakenFile> {
  const { relative, real } = await locate(workspace, path);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ELOOP' ? new ValueError(`staged path is a symbolic link: ${relative}`) : err;
  });
  try {
    if (!(await handle.stat()).isFile()) throw new ValueError(`not a regular file: ${relative}`);
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        size += chunk.byteLength;
        done(null, chunk);
      },
    });
    await pipeline(createReadStream('', { fd: handle.fd, autoClose: false, start: 0 }), tap, createWriteStream(destination, { flags: 'wx', mode: 0o600 }));
    const sha256 = hash.digest('hex');
    if (basename(dirname(relative)) !== sha256) throw new ValueError(`staged file ${relative} no longer matches the checksum it was staged under`);
    return { relative, name: basename(relative), sha256, size };
  } finally {
    await handle.close();
  }
}

/** Removes a consumed staged file (and its then empty checksum directory); repeated removal is harmless. */
export async function removeStagedFile(workspace: string, relative: string): Promise<void> {
  // The upload limit only matters for uploads; removal is the same as DELETE /files.
  await new UploadStaging(workspace, 1).remove(relative);
}
