/**
 * The sizes and leads of chunks written to uWS: how a chunk is cut to fit one cork, and how a
 * stream's lead (StreamOptions) is taken off the chunks that start with it.
 */

/**
 * Bytes of data one cork carries at most. A write inside a cork that overflows uWS's 16 KiB cork
 * buffer makes uWS flush the buffer first and then write the data; in this build, when that flush
 * fails (the socket is full while uWS's own buffer is empty), uWS buffers the corked bytes and
 * drops the data (AsyncSocket::uncork; fixed upstream in uWebSockets v20.77, commit 6b7f354). For
 * a streamed body that means a chunk header on the wire without its chunk: the client reads the
 * next chunk's framing as data and fails (`Invalid character in chunk size`). So a body chunk
 * never shares a cork with more than fits: a larger one is written as several chunks, one cork
 * each, and a large complete answer goes through tryEnd, whose writes are optional (an optional
 * write that cannot be sent is reported, not dropped). The margin covers a chunk's framing, the
 * first write's header lines and a lead.
 */
export const CORK_PIECE = 16 * 1024 - 1024;

/** A chunk of nothing: what is written or kept in place of bytes not kept. */
export const EMPTY_CHUNK = new Uint8Array(0);

/** Byte length of a chunk, without scanning a string that cannot exceed `limit` in UTF-8. */
export function exceeds(chunk: string | Uint8Array, limit: number): boolean {
  if (typeof chunk !== 'string') return chunk.byteLength > limit;
  return chunk.length * 3 > limit && Buffer.byteLength(chunk) > limit;
}

/** Whether a chunk starts with the (ASCII) `lead`. */
function startsWith(chunk: string | Uint8Array, lead: string): boolean {
  if (typeof chunk === 'string') return chunk.startsWith(lead);
  if (chunk.byteLength < lead.length) return false;
  for (let i = 0; i < lead.length; i++) if (chunk[i] !== lead.charCodeAt(i)) return false;
  return true;
}

const noLead = (lead: string) => new Error(`a streamed chunk does not start with its lead ${JSON.stringify(lead)}`);

/** `chunk` without its `lead` (a chunk of a stream with a lead must start with it). */
export function cutLead(chunk: string | Uint8Array, lead: string): string | Uint8Array {
  if (!startsWith(chunk, lead)) throw noLead(lead);
  return typeof chunk === 'string' ? chunk.slice(lead.length) : chunk.subarray(lead.length);
}

/** Shared chunks without their lead, by chunk (see withoutLead). */
const leadless = new WeakMap<Uint8Array, { lead: string; rest: Uint8Array }>();

/**
 * A shared chunk without its `lead`, made once per chunk (and lead), so ten thousand streams
 * writing it allocate nothing.
 */
export function withoutLead(chunk: Uint8Array, lead: string): Uint8Array {
  const known = leadless.get(chunk);
  if (known?.lead === lead) return known.rest;
  if (!startsWith(chunk, lead)) throw noLead(lead);
  const rest = chunk.subarray(lead.length);
  leadless.set(chunk, { lead, rest });
  return rest;
}
