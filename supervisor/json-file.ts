import { readFile } from 'node:fs/promises';

/**
 * A JSON file holding an object, read tolerantly: missing, unreadable, invalid JSON or any other
 * JSON value all answer null (records and package manifests written by others look missing).
 */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
