import type { Stats } from 'node:fs';
import { posix } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { IncomingRequest, ResponseHeaders, ResponseSink } from '../http.js';
import { contentDisposition, mediaTypeOf } from '../media-types.js';
import { HttpError } from '../../core/errors.js';
import { parseRange } from './byte-ranges.js';
import { pumpFile } from './file-pump.js';

/**
 * Sent with every download: the file is shown as what its extension says and nothing else, and
 * a page opened from it (an svg, an html file) runs no script in the service's origin.
 */
const INERT = Object.freeze({
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
  'cache-control': 'private, no-cache',
});

/** An opened workspace file to send: the supervisor resolves and opens it (4xx as HttpError). */
export interface DownloadFile {
  readonly handle: FileHandle;
  readonly stat: Stats;
}

/** Opens a client path for download, with the path safety of `preview_file`. */
export type OpenDownload = (path: string) => Promise<DownloadFile>;

/** A validator that changes whenever the file is replaced or rewritten. */
function entityTag(stat: Stats): string {
  return `"${stat.ino.toString(16)}-${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

/** `If-None-Match` (weak comparison, `*`), else `If-Modified-Since` at one-second precision. */
function notModified(headers: Readonly<Record<string, string>>, etag: string, stat: Stats): boolean {
  const match = headers['if-none-match'];
  if (match !== undefined) return match.trim() === '*' || match.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  const since = Date.parse(headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && Math.floor(stat.mtimeMs / 1000) * 1000 <= since;
}

/** `If-Range`: a Range applies only while the client's copy is still the current file. */
function rangeStillValid(headers: Readonly<Record<string, string>>, etag: string, lastModified: string): boolean {
  const ifRange = headers['if-range'];
  return ifRange === undefined || ifRange === etag || ifRange === lastModified;
}

/**
 * `GET`/`HEAD /files?path=...`: streams a workspace file with ranges, validators and a type from
 * its extension. Answers how many body bytes it sent.
 */
export async function sendFile(open: OpenDownload, req: IncomingRequest, res: ResponseSink): Promise<number> {
  const path = new URLSearchParams(req.query).get('path');
  if (path === null || path === '') throw new HttpError(422, 'query parameter path is required (a workspace-relative file path)');
  const file = await open(path);
  try {
    const { stat } = file;
    const etag = entityTag(stat);
    const lastModified = stat.mtime.toUTCString();
    const validators = { etag, 'last-modified': lastModified, 'accept-ranges': 'bytes' };
    if (notModified(req.headers, etag, stat)) {
      res.send(304, { ...validators, ...INERT });
      return 0;
    }
    const range = rangeStillValid(req.headers, etag, lastModified) ? parseRange(req.headers['range'], stat.size) : parseRange(undefined, stat.size);
    if (range.kind === 'unsatisfiable') {
      res.send(416, { ...validators, 'content-range': `bytes */${stat.size}`, 'content-type': 'application/json' }, JSON.stringify({ detail: `Range not satisfiable: the file has ${stat.size} bytes` }));
      return 0;
    }
    const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, stat.size - 1];
    const length = end - start + 1;
    const headers: ResponseHeaders = {
      ...validators,
      ...INERT,
      'content-type': mediaTypeOf(path),
      'content-disposition': contentDisposition(posix.basename(path)),
      'content-length': String(length),
      ...(range.kind === 'partial' ? { 'content-range': `bytes ${start}-${end}/${stat.size}` } : {}),
    };
    const body = res.stream(range.kind === 'partial' ? 206 : 200, headers);
    if (req.method === 'HEAD' || length === 0) {
      body.end();
      return 0;
    }
    return await pumpFile(file.handle, start, length, body, req.signal);
  } finally {
    await file.handle.close().catch(() => undefined);
  }
}
