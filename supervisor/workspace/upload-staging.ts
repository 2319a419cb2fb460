import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { link, lstat, mkdir, open, readdir, realpath, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FileCopy } from '../../schemas/workspace.js';
import { HttpError } from '../../core/errors.js';
import { STATE_DIR } from '../common/token-store.js';
import { isInside, resolveEntryPath, UnsafePathError, type WorkspacePath } from './safe-path.js';
import { STAGING_ROOT, stagedFilePath, uploadDirectory, uploadFileName } from './staged-path.js';
import { receiveUpload, type ReceivedUpload, type UploadSource } from './upload-receiver.js';

/** How often placing an upload is tried again when `delete_entries` removed a directory on its way. */
const PLACE_ATTEMPTS = 10;

const conflict = (message: string) => new HttpError(409, message);
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** The answer for a file-system failure the client can act on; undefined for anything else. */
function storageProblem(err: unknown): HttpError | undefined {
  switch (code(err)) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new HttpError(507, 'Insufficient storage: the workspace disk is full; nothing was stored. Free some space and upload again');
    case 'ENAMETOOLONG':
      return new HttpError(422, 'x-file-directory or x-file-name makes a path too long for the file system');
    default:
      return undefined;
  }
}

/** sha256 of a file, opened without following a link. */
async function hashFile(path: string): Promise<string> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  const hash = createHash('sha256');
  await pipeline(createReadStream('', { fd: file.fd, autoClose: false }), hash);
  await file.close();
  return hash.digest('hex');
}

/**
 * `POST /files` and `DELETE /files`: uploads land in a private part file, then are linked into
 * `tmp/[dir/]<sha256>/<name>`. Directories on the way are created one by one without following
 * links: any link there, or a different file at the destination, is a 409.
 */
export class UploadStaging {
  readonly #parts: string;
  /** Part files of uploads in progress: the sweep leaves them alone. */
  readonly #live = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly limit: number,
  ) {
    this.#parts = join(root, STATE_DIR, 'uploads');
  }

  /**
   * Removes every part file no upload of this process is writing: one left behind by a process
   * that was killed mid-upload (the workspace has one service, so nothing else owns them).
   */
  async sweepParts(): Promise<void> {
    const names = await readdir(this.#parts).catch(() => [] as string[]);
    for (const name of names) {
      const part = join(this.#parts, name);
      if (name.endsWith('.part') && !this.#live.has(part)) await rm(part, { force: true });
    }
  }

  /** Receives one upload and stages it; answers the FileCopy. */
  async upload(req: UploadSource): Promise<FileCopy> {
    const name = uploadFileName(req.headers['x-file-name']);
    const directory = uploadDirectory(req.headers['x-file-directory'], name);
    const part = join(this.#parts, `${randomBytes(12).toString('hex')}.part`);
    this.#live.add(part);
    try {
      await mkdir(this.#parts, { recursive: true, mode: 0o700 });
      const received = await receiveUpload(req, part, this.limit);
      await this.#stage(part, [...directory, received.sha256], name, received);
      return { path: [...directory, received.sha256, name].join('/'), sha256: received.sha256, size: received.size };
    } catch (err) {
      throw storageProblem(err) ?? err;
    } finally {
      await rm(part, { force: true });
      this.#live.delete(part);
    }
  }

  /**
   * Links the part file into place. `delete_entries(["tmp"])` may remove a directory between our
   * mkdir and link (ENOENT): then the directories are made again. A failed attempt leaves no
   * empty checksum directory behind.
   */
  async #stage(part: string, parts: readonly string[], name: string, received: ReceivedUpload): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let dir: string | undefined;
      try {
        dir = await this.#makeDirectories(parts);
        return await this.#place(part, join(dir, name), received.sha256, received.size);
      } catch (err) {
        if (dir !== undefined) await rmdir(dir).catch(() => undefined);
        if (code(err) !== 'ENOENT' || attempt >= PLACE_ATTEMPTS) throw err;
      }
    }
  }

  /** Creates `root/<parts...>` one level at a time, refusing links and non-directories. */
  async #makeDirectories(parts: readonly string[]): Promise<string> {
    let current = this.root;
    for (const part of parts) {
      current = join(current, part);
      for (let attempt = 0; ; attempt++) {
        const info = await lstat(current).catch(() => null);
        if (info?.isSymbolicLink()) throw conflict(`symbolic link in the staging path: ${part}`);
        if (info?.isDirectory()) break;
        if (info) throw conflict(`staging path is occupied by a file: ${part}`);
        try {
          await mkdir(current);
          break;
        } catch (err) {
          // Another upload created it meanwhile, or a deletion is racing us: look again.
          if (code(err) !== 'EEXIST' || attempt >= PLACE_ATTEMPTS) throw err;
        }
      }
    }
    return current;
  }

  /** Links the part file to `dest` without replacing anything; an identical file there is fine. */
  async #place(part: string, dest: string, sha256: string, size: number): Promise<void> {
    try {
      await link(part, dest);
      return;
    } catch (err) {
      if (code(err) !== 'EEXIST') throw err;
    }
    const info = await lstat(dest);
    if (info.isSymbolicLink()) throw conflict('the destination is a symbolic link');
    if (!info.isFile() || info.size !== size || (await hashFile(dest)) !== sha256) {
      throw conflict('the destination is occupied by different content');
    }
  }

  /** `DELETE /files?path=`: checks that `value` names a staged file, removes it, answers the path. */
  async removeStaged(value: string | null): Promise<string> {
    const path = stagedFilePath(value);
    await this.remove(path);
    return path;
  }

  /** Removes a staged file (and its now empty checksum directory); a missing one is fine. */
  async remove(relative: string): Promise<void> {
    let target: WorkspacePath | null;
    try {
      target = await resolveEntryPath(this.root, relative);
    } catch (err) {
      if (err instanceof UnsafePathError) throw new HttpError(422, err.message);
      throw err;
    }
    if (!target?.exists) return;
    const staging = await realpath(join(this.root, STAGING_ROOT)).catch(() => null);
    if (staging !== join(this.root, STAGING_ROOT) || !isInside(staging, target.real)) {
      throw new HttpError(422, `not a staged file: ${relative}`);
    }
    const info = await lstat(target.real).catch(() => null);
    if (info?.isDirectory()) throw new HttpError(422, `not a staged file: ${relative}`);
    await unlink(target.real).catch((err: unknown) => {
      if (code(err) !== 'ENOENT') throw err;
    });
    await rmdir(dirname(target.real)).catch(() => undefined);
  }
}
