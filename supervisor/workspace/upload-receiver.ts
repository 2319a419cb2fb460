import { createHash } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import type { IncomingRequest } from '../../protocol/http.js';
import { HttpError } from '../errors.js';

/** A complete upload in a temporary file. */
export interface ReceivedUpload {
  readonly tempPath: string;
  readonly sha256: string;
  readonly size: number;
}

const tooLarge = (limit: number) => new HttpError(413, `Upload exceeds the limit of ${limit} bytes`);

/** The announced length: null when absent (chunked), 400 when malformed, 413 when over the limit. */
export function announcedLength(req: IncomingRequest, limit: number): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  if (!/^\d+$/.test(header.trim())) throw new HttpError(400, `Invalid Content-Length: ${header}`);
  const length = Number(header.trim());
  if (length > limit) throw tooLarge(limit);
  return length;
}

async function writeAll(file: FileHandle, chunk: Uint8Array): Promise<void> {
  for (let done = 0; done < chunk.byteLength; ) {
    done += (await file.write(chunk, done, chunk.byteLength - done)).bytesWritten;
  }
}

/**
 * Streams the request body into `tempPath` while hashing it. The disk write of one chunk overlaps
 * the hashing of it and the arrival of the next. The byte count is checked as it grows (413 as
 * soon as it passes the limit, the rest is never read) and against Content-Length at the end.
 * On any failure, a client gone included, the temporary file is removed.
 */
export async function receiveUpload(req: IncomingRequest, tempPath: string, limit: number): Promise<ReceivedUpload> {
  const announced = announcedLength(req, limit);
  const file = await open(tempPath, 'wx', 0o644);
  const hash = createHash('sha256');
  let size = 0;
  let pending: Promise<void> = Promise.resolve();
  try {
    for await (const chunk of req.body()) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(limit);
      await pending;
      pending = writeAll(file, chunk);
      hash.update(chunk);
    }
    await pending;
    if (announced !== null && size !== announced) throw new HttpError(400, `Body has ${size} bytes but Content-Length announced ${announced}`);
    await file.close();
    return { tempPath, sha256: hash.digest('hex'), size };
  } catch (err) {
    await pending.catch(() => undefined);
    await file.close().catch(() => undefined);
    await rm(tempPath, { force: true });
    throw err;
  }
}
