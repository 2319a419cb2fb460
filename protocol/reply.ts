import { HttpError } from '../core/errors.js';
import type { BodyWriter, HeaderMap, ResponseSink } from './http.js';

export const JSON_HEADERS: Readonly<HeaderMap> = Object.freeze({ 'content-type': 'application/json' });

export function sendJson(res: ResponseSink, status: number, value: unknown, headers: HeaderMap = {}): void {
  res.send(status, { ...JSON_HEADERS, ...headers }, JSON.stringify(value));
}

/** Sends an HttpError as `{detail}` (plus its `extra` fields); everything else as a 500 without internals. */
export function sendError(res: ResponseSink, err: unknown): void {
  if (err instanceof HttpError) {
    const headers: HeaderMap = err.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    // After a 413 the rest of the body is not read: close the connection instead of draining it.
    if (err.status === 413) headers['connection'] = 'close';
    sendJson(res, err.status, err.extra ? { detail: err.detail, ...err.extra } : { detail: err.detail }, headers);
    return;
  }
  console.error('taskyard: internal error', err);
  sendJson(res, 500, { detail: 'Internal server error' });
}

/**
 * Writes chunks with backpressure; false when the client left. A failure midway drops the
 * connection, so the caller sees a broken answer, never a short one that parses (`quiet`: the
 * failure is someone else's, such as a target that broke off, and is not logged here).
 */
export async function writeAll(out: BodyWriter, chunks: AsyncIterable<string | Uint8Array>, quiet = false, continues = false): Promise<boolean> {
  try {
    for await (const chunk of chunks) if (!(await out.write(chunk, continues))) return false;
    return true;
  } catch (err) {
    if (!quiet) console.error('taskyard: a streamed answer failed midway', err);
    out.abort();
    return false;
  }
}
