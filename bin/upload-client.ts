import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { CallError, UsageError } from './cli-errors.js';
import type { Connection } from './connection.js';
import { headers, readAnswer, request } from './job-client.js';
import type { FileCopy } from '../schemas/workspace.js';


/**
 * Streams a local file to `POST /files` (raw body, name in `x-file-name`, `directory` in
 * `x-file-directory`); answers the FileCopy. `notFile` says what to give instead of a non-file.
 */
export async function uploadFile(conn: Connection, file: string, name = basename(file), opts: { directory?: string; notFile?: string } = {}): Promise<FileCopy> {
  const info = await stat(file).catch(() => null);
  if (!info) throw new UsageError(`${file} does not exist`);
  if (!info.isFile()) throw new UsageError(`${file} is not a file: ${opts.notFile ?? 'give a package tarball (made by npm pack) or a package directory'}`);
  const directory = opts.directory === undefined ? {} : { 'x-file-directory': opts.directory };
  const init = {
    method: 'POST',
    headers: headers(conn, { 'content-type': 'application/octet-stream', 'x-file-name': encodeURIComponent(name), 'content-length': String(info.size), ...directory }),
    body: createReadStream(file),
  };
  const response = await readAnswer(await request(conn, '/files', init));
  if (!response.success) throw new CallError(`upload of ${file} failed: ${JSON.stringify(response.answer)}`);
  return response.answer as FileCopy;
}
