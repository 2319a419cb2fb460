import type { HeaderMap } from './http.js';

/**
 * Why a request's body framing is ambiguous, or undefined when it is not: a repeated
 * Content-Length (front ends join repeats with `, `), or Content-Length beside Transfer-Encoding
 * (RFC 9112 section 6.3). Two parsers that pick different framings see different requests in the
 * same bytes (request smuggling), so such a request gets a 400 and its connection is closed: the
 * bytes after it are never read as another request. node:http's parser refuses these itself.
 */
export function ambiguousFraming(headers: HeaderMap): string | undefined {
  const length = headers['content-length'];
  if (length === undefined) return undefined;
  if (headers['transfer-encoding'] !== undefined) return 'Invalid Content-Length header: a request may not carry both Content-Length and Transfer-Encoding';
  if (length.includes(',')) return 'Invalid Content-Length header: a request may carry only one Content-Length';
  return undefined;
}
