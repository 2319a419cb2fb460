import { depthExceeds } from '../core/json-depth.js';
import { HttpError } from '../core/errors.js';
import type { IncomingRequest } from './http.js';
import { BodyGatherer, mayMove } from './body-gatherer.js';
import { OFF_LOOP_BYTES, parseJsonOffLoop } from './json-parse-thread.js';
import { JsonValueCounter } from './json-values.js';

/** Deepest nesting accepted in a JSON body: deeper values break structuredClone and stringify. */
export const MAX_JSON_DEPTH = 64;
/**
 * Most values (arrays, objects, their elements and members' values: see JsonValueCounter) a JSON
 * body may hold.
 * Parsing, validating and cloning cost about a microsecond per value, on the event loop that
 * answers every other request; this keeps one body to a few tens of milliseconds at worst. Data
 * larger than that belongs in a file (`POST /files`), which a Job then reads.
 */
export const MAX_JSON_VALUES = 20_000;
/** Fewer bytes than this cannot hold more than MAX_JSON_VALUES values: such a body is not scanned. */
const SCAN_FROM_BYTES = MAX_JSON_VALUES;

/** Why a body with too many values is refused (the 422 detail's msg; MCP's error message). */
export const TOO_MANY_VALUES = `JSON body holds more than ${MAX_JSON_VALUES} values (arrays, objects, their elements and members); send large data as a file`;
const tooManyValues = () => new HttpError(422, [{ loc: ['body'], msg: TOO_MANY_VALUES, type: 'json_too_many_values' }]);

/** Whether an HttpError is the refusal of a body with too many values. */
export const isTooManyValues = (err: unknown): boolean => err instanceof HttpError && Array.isArray(err.detail) && (err.detail[0] as { type?: string } | undefined)?.type === 'json_too_many_values';

/**
 * Reads the whole JSON body, refusing as soon as it exceeds `limit` bytes (413) or holds more
 * than MAX_JSON_VALUES values (422): values are counted chunk by chunk as they arrive, so no
 * single step scans much, and a refused body is not read on.
 */
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
    if (only.byteLength >= SCAN_FROM_BYTES && !new JsonValueCounter(MAX_JSON_VALUES).feed(only)) throw tooManyValues();
    return Buffer.isBuffer(only) ? only : Buffer.from(only.buffer, only.byteOffset, only.byteLength);
  }
  const values = new JsonValueCounter(MAX_JSON_VALUES);
  const gathered = new BodyGatherer(declared === undefined ? undefined : Number(declared));
  for await (const chunk of body) {
    if (gathered.size + chunk.byteLength > limit) throw new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
    if (!values.feed(chunk)) throw tooManyValues();
    gathered.add(chunk, req);
  }
  return gathered.bytes();
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

/** Reads and parses a JSON body; a large one is parsed off the event loop (see OFF_LOOP_BYTES). */
export async function readJson(req: IncomingRequest, limit: number): Promise<unknown> {
  const bytes = await readBody(req, limit);
  return bytes.byteLength >= OFF_LOOP_BYTES ? parseJsonOffLoop(bytes, mayMove(bytes)) : parseJson(bytes);
}
