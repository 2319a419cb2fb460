import { HttpError } from '../../core/errors.js';
import { normalizeClientPath, UnsafePathError } from './safe-path.js';

/** Every staged file lives below this workspace directory. */
export const STAGING_ROOT = 'tmp';
const SHA256_HEX = /^[0-9a-f]{64}$/;
// Control characters and separators make names that are unsafe to show or to pass on.
const BAD_NAME = /[\u0000-\u001f\u007f/\\]/;

/**
 * Header values are Latin-1 on the wire, so clients percent-encode non-ASCII names
 * (`encodeURIComponent`); a literal `%` is sent as `%25`.
 */
function decodeHeader(header: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new HttpError(422, `${header} is not valid percent-encoding`);
  }
}

function checkName(header: string, name: string): string {
  if (name === '' || name === '.' || name === '..' || BAD_NAME.test(name)) {
    throw new HttpError(422, `${header} must be a plain file name (no path separators, no "..", not empty): ${JSON.stringify(name)}`);
  }
  if (Buffer.byteLength(name) > 255) throw new HttpError(422, `${header} is longer than 255 bytes`);
  return name;
}

/** The upload's file name from `x-file-name` (required). 422 on anything but a plain name. */
export function uploadFileName(value: string | undefined): string {
  if (value === undefined) throw new HttpError(422, 'x-file-name header is required');
  return checkName('x-file-name', decodeHeader('x-file-name', value));
}

/**
 * Most bytes a staged path (`tmp/[dir/]<sha256>/<name>`) may have: with the workspace root in
 * front it must stay well inside the file system's PATH_MAX (4096 on Linux).
 */
export const MAX_STAGED_PATH_BYTES = 1024;

/**
 * The components of `x-file-directory` (default `tmp`); it must begin with `tmp`, stay inside,
 * and leave room for the checksum directory and `fileName` within MAX_STAGED_PATH_BYTES.
 */
export function uploadDirectory(value: string | undefined, fileName = ''): string[] {
  const parts = directoryParts(value);
  const bytes = Buffer.byteLength([...parts, 'x'.repeat(64), fileName].join('/'));
  if (bytes > MAX_STAGED_PATH_BYTES) throw new HttpError(422, `x-file-directory is too long: the staged path would have ${bytes} bytes, at most ${MAX_STAGED_PATH_BYTES} are allowed`);
  return parts;
}

function directoryParts(value: string | undefined): string[] {
  if (value === undefined || value === '') return [STAGING_ROOT];
  let relative: string;
  try {
    relative = normalizeClientPath(decodeHeader('x-file-directory', value));
  } catch (err) {
    if (err instanceof UnsafePathError) throw new HttpError(422, `x-file-directory: ${err.message}`);
    throw err;
  }
  const parts = relative === '' ? [] : relative.split('/');
  if (parts[0] !== STAGING_ROOT) throw new HttpError(422, `x-file-directory must begin with ${STAGING_ROOT}: ${value}`);
  for (const part of parts) checkName('x-file-directory', part);
  return parts;
}

/**
 * The `path` query of `DELETE /files`: a staged file `tmp/[dir/]<sha256>/<name>`. Absolute,
 * escaping and other paths are refused with 422.
 */
export function stagedFilePath(value: string | null): string {
  if (value === null || value === '') throw new HttpError(422, 'query parameter path is required');
  let relative: string;
  try {
    relative = normalizeClientPath(value);
  } catch (err) {
    if (err instanceof UnsafePathError) throw new HttpError(422, err.message);
    throw err;
  }
  const parts = relative.split('/');
  if (parts[0] !== STAGING_ROOT || parts.length < 3 || !SHA256_HEX.test(parts[parts.length - 2]!)) {
    throw new HttpError(422, `only staged files (${STAGING_ROOT}/[dir/]<sha256>/<name>) can be removed: ${value}`);
  }
  return relative;
}
