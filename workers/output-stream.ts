import type { Readable } from 'node:stream';
import { utf8SafeLength } from '../core/utf8-cut.js';

/** A piece of a command's output as it was written: text plus its byte offsets in that stream. */
export interface OutputChunk {
  channel: 'stdout' | 'stderr';
  content: string;
  /** Byte offset of the chunk's first byte in the stream. */
  start_offset: number;
  /** Byte offset just past the chunk (the next chunk's start). */
  next_offset: number;
}

/**
 * Cuts one output stream into chunks that never split a UTF-8 character, with exact byte
 * offsets (a character's tail bytes wait for the next read). Unlike the capped answer, this sees
 * every byte: the stream is for watching, the answer for keeping.
 */
export class OutputStreamer {
  #offset = 0;
  #pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly channel: OutputChunk['channel'],
    private readonly deliver: (chunk: OutputChunk) => void,
  ) {}

  attach(stream: Readable): void {
    stream.on('data', (chunk: Buffer) => this.push(chunk));
    stream.on('end', () => this.flush());
  }

  push(data: Buffer): void {
    const bytes = this.#pending.length > 0 ? Buffer.concat([this.#pending, data]) : data;
    const whole = utf8SafeLength(bytes);
    this.#pending = whole === bytes.length ? Buffer.alloc(0) : Buffer.from(bytes.subarray(whole));
    if (whole > 0) this.#send(bytes.subarray(0, whole));
  }

  /** Sends what is left (an unfinished character at the very end becomes U+FFFD, as in the answer). */
  flush(): void {
    if (this.#pending.length === 0) return;
    const rest = this.#pending;
    this.#pending = Buffer.alloc(0);
    this.#send(rest);
  }

  #send(bytes: Buffer): void {
    const start = this.#offset;
    this.#offset += bytes.length;
    this.deliver({ channel: this.channel, content: bytes.toString('utf8'), start_offset: start, next_offset: this.#offset });
  }
}
