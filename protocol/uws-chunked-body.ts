import type { SharedBodyWriter } from './shared-body-writer.js';
import { CORK_PIECE, cutLead, EMPTY_CHUNK, exceeds, withoutLead } from './uws-chunks.js';
import type { UwsSocket } from './uws-socket.js';

/**
 * A streamed body of unknown length, in uWS's chunked encoding (its head already written, with
 * the `lead` when there is one).
 *
 * uWS frames each write as CRLF (closing the previous chunk), size, CRLF, data: a chunk is
 * complete on the wire only once the next one starts. With a lead, every chunk is written without
 * it and followed by the lead (the start of the next chunk), so the CRLF closing each chunk leaves
 * with it. The first lead also completes the head at once.
 */
export function chunkedBody(out: UwsSocket, lead: string | undefined): SharedBodyWriter {
  const { res } = out;
  /** Whether the lead is on the wire, owed by the next chunk (not after a chunk that continues). */
  let leadSent = lead !== undefined;
  const rest = (chunk: string | Uint8Array): string | Uint8Array => (lead === undefined || !leadSent ? chunk : cutLead(chunk, lead));
  const write = async (chunk: string | Uint8Array, continues = false): Promise<boolean> => {
    if (out.aborted) return false;
    const data = rest(chunk);
    leadSent = lead !== undefined && !continues;
    const ok = out.writeChunk(data, leadSent ? lead : undefined);
    if (!ok && !out.aborted) await out.writable();
    return !out.aborted;
  };
  // A broadcast writes one chunk to thousands of streams: like a bare uWS server, one cork (one
  // send) each, through a callback made once per stream, not once per write. The lead is a chunk
  // of its own, as in `write`: its framing carries the CRLF that completes the shared chunk.
  const leadBytes = lead === undefined ? undefined : Buffer.from(lead, 'latin1');
  let shared: Uint8Array = EMPTY_CHUNK;
  let sharedTaken = true;
  const writeCorked = () => {
    sharedTaken = res.write(shared);
    if (leadBytes) sharedTaken = res.write(leadBytes) && sharedTaken;
  };
  return {
    write,
    writeShared: (chunk) => {
      if (out.aborted) return false;
      // After a chunk that continues, the next one is written as it is: the ordinary way.
      if (lead !== undefined && !leadSent) return write(chunk);
      shared = lead === undefined ? chunk : withoutLead(chunk, lead);
      if (shared.byteLength > CORK_PIECE) sharedTaken = out.writeChunk(shared, lead);
      else res.cork(writeCorked);
      shared = EMPTY_CHUNK;
      if (sharedTaken) return true;
      return out.aborted ? false : out.writable().then(() => !out.aborted);
    },
    end: (last) => {
      if (out.aborted) return;
      out.aborted = true;
      // Body chunks still to come have no reader now; the ended response must not be paused.
      if (out.requestBody && !out.requestBody.complete) void out.requestBody.discard();
      let data = last === undefined ? undefined : rest(last);
      if (data !== undefined && exceeds(data, CORK_PIECE)) {
        out.writeChunk(data);
        data = undefined;
      }
      res.cork(() => (data === undefined ? res.end() : res.end(data)));
    },
    abort: () => out.drop(),
  };
}
