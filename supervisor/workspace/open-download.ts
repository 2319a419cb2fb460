import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { HttpError } from '../../core/errors.js';
import { openInside } from '../../workers/preview/open-file.js';
import { PreviewFailure } from '../../workers/preview/preview-failure.js';
import { resolveClientPath, UnsafePathError } from './safe-path.js';

const FAILURE_STATUS: Readonly<Record<string, number>> = Object.freeze({ FileNotFoundError: 404, IsADirectoryError: 422, PermissionError: 403 });

/** Opens a client path as `preview_file` would: inside the workspace, links resolved, regular files only. */
export async function openDownload(root: string, path: string): Promise<{ handle: FileHandle; stat: Stats }> {
  try {
    const resolved = await resolveClientPath(root, path);
    if (!resolved.exists) throw new HttpError(404, `no such file: ${path}`);
    const opened = await openInside(root, resolved.real, path);
    return { ...opened, stat: await opened.handle.stat() };
  } catch (err) {
    if (err instanceof UnsafePathError) throw new HttpError(err.reason === 'private' ? 403 : 422, err.message);
    if (err instanceof PreviewFailure) throw new HttpError(FAILURE_STATUS[err.type] ?? 403, err.message);
    throw err;
  }
}

