import type { Readable } from 'node:stream';
import { utf8SafeLength } from '../core/utf8-cut.js';

/** The spec's per-stream retention limit for `shell` (1 MiB). */
export const SHELL_OUTPUT_CAP = 1024 * 1024;

/** Decoded text of a capped stream and whether bytes were dropped. */
export interface CappedText {
  text: string;
  truncated: boolean;
}

/**
 * Keeps at most `cap` bytes of a stream while still draining it, so the writer never blocks on a
 * full pipe and memory never holds more than the cap.
 */
export class CappedCollector {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #truncated = false;

  constructor(readonly cap: number = SHELL_OUTPUT_CAP) {}

  /** Starts draining `stream` into this collector. */
  attach(stream: Readable): void {
    stream.on('data', (chunk: Buffer) => this.push(chunk));
    // A pipe torn down after a kill may error (EPIPE/ECONNRESET): the output so far still counts.
    stream.on('error', () => {});
  }

  push(chunk: Buffer): void {
    const room = this.cap - this.#kept;
    if (chunk.length > room) this.#truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    // Copy slices so the retained bytes do not pin a larger pooled buffer.
    this.#chunks.push(kept === chunk ? chunk : Buffer.from(kept));
    this.#kept += kept.length;
  }

  /** The retained text; after a truncation the cut moves back to a character boundary. */
  result(): CappedText {
    const bytes = Buffer.concat(this.#chunks, this.#kept);
    const length = this.#truncated ? utf8SafeLength(bytes) : bytes.length;
    return { text: bytes.toString('utf8', 0, length), truncated: this.#truncated };
  }
}
