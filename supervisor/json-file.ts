import { isObject } from '../core/is-object.js';
import { readRegularFile, readRegularFileSync } from '../workers/safe-file.js';

/**
 * A JSON file holding an object, read tolerantly: missing, unreadable, invalid JSON or any other
 * JSON value all answer null (records and package manifests written by others look missing).
 * A symbolic link, FIFO or other non-regular file looks missing too: it is opened without
 * following links and without waiting for a writer, so a FIFO named status.json cannot hold a
 * libuv thread (and with four of them, every file operation of the service).
 */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  try {
    return objectIn(await readRegularFile(file));
  } catch {
    return null;
  }
}

/** `readJsonObject`, synchronous (a record just written, read from the page cache). */
export function readJsonObjectSync(file: string): Record<string, unknown> | null {
  try {
    return objectIn(readRegularFileSync(file));
  } catch {
    return null;
  }
}

function objectIn(bytes: Buffer): Record<string, unknown> | null {
  const parsed: unknown = JSON.parse(bytes.toString('utf8'));
  return isObject(parsed) ? parsed : null;
}
