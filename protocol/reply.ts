import { HttpError } from '../core/errors.js';
import type { HeaderMap, ResponseSink } from './http.js';

export const JSON_HEADERS: Readonly<HeaderMap> = Object.freeze({ 'content-type': 'application/json' });

export function sendJson(res: ResponseSink, status: number, value: unknown, headers: HeaderMap = {}): void {
  res.send(status, { ...JSON_HEADERS, ...headers }, JSON.stringify(value));
}

/** Sends an HttpError as `{detail}`; everything else as a 500 without internals. */
export function sendError(res: ResponseSink, err: unknown): void {
  if (err instanceof HttpError) {
    const headers: HeaderMap = err.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    // After a 413 the rest of the body is not read: close the connection instead of draining it.
    if (err.status === 413) headers['connection'] = 'close';
    sendJson(res, err.status, { detail: err.detail }, headers);
    return;
  }
  console.error('taskyard: internal error', err);
  sendJson(res, 500, { detail: 'Internal server error' });
}
