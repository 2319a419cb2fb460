import { depthExceeds } from '../core/json-depth.js';
import { HttpError } from '../core/errors.js';
import type { IncomingRequest } from './http.js';

/** Deepest nesting accepted in a JSON body: deeper values break structuredClone and stringify. */
export const MAX_JSON_DEPTH = 64;

/** Reads the whole body, refusing (413) as soon as it exceeds `limit` bytes. */
export async function readBody(req: IncomingRequest, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    if (!/^\d+$/.test(declared)) throw new HttpError(400, 'Invalid Content-Length header');
    throw new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
  }
  const body = req.body();
  // A body that arrived whole is an array: take it without the async iteration.
  if (Array.isArray(body) && body.length <= 1) {
    const only = body[0] as Uint8Array | undefined;
    if (!only) return Buffer.alloc(0);
    if (only.byteLength > limit) throw new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
    return Buffer.isBuffer(only) ? only : Buffer.from(only.buffer, only.byteOffset, only.byteLength);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}


/** How many `{` and `[` bytes there are (inside strings too: an upper bound of the nesting). */
function openers(bytes: Buffer): number {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x7b || b === 0x5b) count++;
  }
  return count;
}

/** Parses a JSON body: 422 with a validation-style detail for malformed or too deep input. */
export function parseJson(bytes: Buffer): unknown {
  if (bytes.byteLength === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new HttpError(422, [{ loc: ['body'], msg: `Invalid JSON: ${(err as Error).message}`, type: 'json_invalid' }]);
  }
  // Nesting deeper than the limit needs more opening brackets than the limit: most bodies are
  // cleared by counting them, without walking the parsed value.
  if (openers(bytes) > MAX_JSON_DEPTH && depthExceeds(value, MAX_JSON_DEPTH)) {
    throw new HttpError(422, [{ loc: ['body'], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_too_deep' }]);
  }
  return value;
}

export async function readJson(req: IncomingRequest, limit: number): Promise<unknown> {
  return parseJson(await readBody(req, limit));
}
