import { isObject } from '../../core/is-object.js';
import { readRegularFile } from '../../workers/safe-file.js';

/**
 * A JSON file holding an object, read tolerantly: missing, unreadable, invalid JSON or any other
 * JSON value all answer null (records and package manifests written by others look missing).
 * A symbolic link, FIFO or other non-regular file looks missing too: it is opened without
 * following links and without waiting for a writer, so a FIFO named status.json cannot hold a
 * libuv thread (and with four of them, every file operation of the service).
 */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  try {
    const text = (await readRegularFile(file)).toString('utf8');
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
