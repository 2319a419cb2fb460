import { openRegularFile } from '../workers/safe-file.js';

/**
 * A JSON file holding an object, read tolerantly: missing, not a regular file (a link, a FIFO, a
 * directory), unreadable, invalid JSON or any other JSON value all answer null (records and package
 * manifests written by others look missing). Opened without following a link at the last
 * component and without blocking, so a Task cannot make the service read elsewhere or hang a thread.
 */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  try {
    const handle = await openRegularFile(file);
    const parsed: unknown = JSON.parse(await handle.readFile('utf8').finally(() => handle.close()));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
