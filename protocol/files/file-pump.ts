import type { FileHandle } from 'node:fs/promises';
import type { BodyWriter } from '../http.js';

/**
 * Bytes per file read and socket write: large enough that the per-chunk trip through the event
 * loop is small next to copying the chunk, small enough to stay in cache between the read and the
 * write, and to keep 20 parallel downloads within 40 MiB of buffers.
 */
export const CHUNK_BYTES = 1024 * 1024;
/** Spare chunk buffers kept between downloads; more parallel downloads allocate and drop theirs. */
const MAX_SPARE = 16;
const spare: Buffer[] = [];

/**
 * A reused buffer: a fresh one per chunk makes the kernel fault in and zero its pages again for
 * every chunk, on top of copying the bytes.
 */
function take(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
}

function give(buffer: Buffer): void {
  if (spare.length < MAX_SPARE) spare.push(buffer);
}

/**
 * Copies `length` bytes from `start` to a sized body (its write resolves once the chunk is handed
 * to the socket whole, so the buffer is free again), reading the next chunk while the current one
 * is written. A file that shrank aborts the response: a short body must not pass for a complete
 * one. Answers how many bytes were sent.
 */
export async function pumpFile(handle: FileHandle, start: number, length: number, body: BodyWriter, signal: AbortSignal): Promise<number> {
  const buffers = [take(), take()] as const;
  let sent = 0;
  let turn = 0;
  const read = (at: number) => handle.read(buffers[turn]!, 0, Math.min(CHUNK_BYTES, length - at), start + at).then((r) => r.bytesRead);
  let reading = read(0);
  try {
    while (sent < length) {
      const bytesRead = await reading;
      if (bytesRead === 0) {
        body.abort();
        return sent;
      }
      const chunk = buffers[turn]!.subarray(0, bytesRead);
      turn ^= 1;
      if (sent + bytesRead < length) reading = read(sent + bytesRead);
      if (signal.aborted || !(await body.write(chunk))) return sent;
      sent += bytesRead;
    }
    body.end();
    return sent;
  } finally {
    // A read still running into the other buffer must finish before that buffer is reused.
    await reading.catch(() => 0);
    give(buffers[0]);
    give(buffers[1]);
  }
}
