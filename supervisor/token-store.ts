import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { STATE_DIR } from '../core/state-dir.js';

/** Service-private state lives here, inside the workspace but hidden from workspace Jobs. */
export { STATE_DIR };

export function tokenFile(workspace: string): string {
  return join(workspace, STATE_DIR, 'token');
}

/**
 * The token kept in the workspace: read it, or create it once (mode 0600, exclusive create so two
 * starts racing agree on one token).
 */
export async function loadOrCreateToken(workspace: string): Promise<string> {
  const file = tokenFile(workspace);
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(join(workspace, STATE_DIR), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  try {
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw err;
  }
}

/** Reads the workspace token without creating one (CLI default). */
export async function readToken(workspace: string): Promise<string | undefined> {
  try {
    return (await readFile(tokenFile(workspace), 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}
