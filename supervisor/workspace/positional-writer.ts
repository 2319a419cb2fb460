import type { FileHandle } from 'node:fs/promises';

/**
 * Bytes one upload may have in flight to the disk. Enough that the body keeps flowing while
 * writes complete (the request body queue pauses the socket whenever its reader lags), bounded so
 * a slow disk cannot make memory grow with the body.
 */
const MAX_IN_FLIGHT = 8 * 1024 * 1024;

interface Pending {
  readonly done: Promise<void>;
  readonly bytes: number;
}

async function writeAt(file: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < chunk.byteLength; ) {
    done += (await file.write(chunk, done, chunk.byteLength - done, position + done)).bytesWritten;
  }
}

/**
 * Appends chunks to a file with several positional writes in flight at once; `write` waits only
 * when the in-flight bytes pass the bound. The caller must not reuse a chunk's memory.
 */
export class PositionalWriter {
  #position = 0;
  #bytes = 0;
  readonly #pending: Pending[] = [];

  constructor(private readonly file: FileHandle) {}

  /** `written` is called once the chunk is on its way to the disk and its memory may be reused. */
  async write(chunk: Uint8Array, written?: () => void): Promise<void> {
    const done = writeAt(this.file, chunk, this.#position);
    if (written) void done.then(written, () => undefined);
    // Failures surface when awaited below or in flush(); this only keeps them from being unhandled meanwhile.
    done.catch(() => undefined);
    this.#position += chunk.byteLength;
    this.#bytes += chunk.byteLength;
    this.#pending.push({ done, bytes: chunk.byteLength });
    while (this.#bytes > MAX_IN_FLIGHT) {
      const oldest = this.#pending.shift()!;
      await oldest.done;
      this.#bytes -= oldest.bytes;
    }
  }

  /** Waits for every write; rejects with the first failure. */
  async flush(): Promise<void> {
    const pending = this.#pending.splice(0);
    this.#bytes = 0;
    await Promise.all(pending.map((p) => p.done));
  }

  /** Waits for every write, ignoring failures (before removing the file). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#pending.splice(0).map((p) => p.done));
    this.#bytes = 0;
  }
}
