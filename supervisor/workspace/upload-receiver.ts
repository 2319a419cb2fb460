import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { HttpError } from '../../core/errors.js';
import { PositionalWriter } from './positional-writer.js';

/**
 * What an upload is read from: the HTTP request satisfies it structurally, so the actors need
 * nothing from the HTTP layer.
 */
export interface UploadSource {
  readonly headers: Readonly<Record<string, string>>;
  body(): AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** Hands a chunk's memory back to the front end once it is written and hashed. */
  recycle?(chunk: Uint8Array): void;
}

/** A complete upload in a temporary file. */
export interface ReceivedUpload {
  readonly tempPath: string;
  readonly sha256: string;
  readonly size: number;
}

const tooLarge = (limit: number) => new HttpError(413, `Upload exceeds the limit of ${limit} bytes`);

/** The announced length: null when absent (chunked), 400 when malformed, 413 when over the limit. */
export function announcedLength(req: UploadSource, limit: number): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  if (!/^\d+$/.test(header.trim())) throw new HttpError(400, `Invalid Content-Length: ${header}`);
  const length = Number(header.trim());
  if (length > limit) throw tooLarge(limit);
  return length;
}

/**
 * Streams the request body into `tempPath` while hashing it. Disk writes run behind the hashing
 * and the arrival of the next chunks (a bounded number of bytes in flight). The byte count is
 * checked as it grows (413 as soon as it passes the limit, the rest is never read) and against
 * Content-Length at the end.
 * On any failure, a client gone included, the temporary file is removed.
 */
export async function receiveUpload(req: UploadSource, tempPath: string, limit: number): Promise<ReceivedUpload> {
  const announced = announcedLength(req, limit);
  const file = await open(tempPath, 'wx', 0o644);
  const hash = createHash('sha256');
  const writer = new PositionalWriter(file);
  let size = 0;
  try {
    for await (const chunk of req.body()) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(limit);
      // The write starts at once (thread pool); hash on this thread meanwhile. Once both are done
      // the chunk's memory goes back to the front end for later chunks.
      const queued = writer.write(chunk, () => req.recycle?.(chunk));
      hash.update(chunk);
      await queued;
    }
    await writer.flush();
    if (announced !== null && size !== announced) throw new HttpError(400, `Body has ${size} bytes but Content-Length announced ${announced}`);
    await file.close();
    return { tempPath, sha256: hash.digest('hex'), size };
  } catch (err) {
    await writer.settle();
    await file.close().catch(() => undefined);
    await rm(tempPath, { force: true });
    throw err;
  }
}
