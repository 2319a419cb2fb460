import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readRegularFile, UnsafeFileError } from '../../workers/safe-file.js';
import { ensurePrivateDir, PrivateStateError } from './private-state.js';

import { STATE_DIR } from '../../core/state-dir.js';

/** Service-private state lives here, inside the workspace but hidden from workspace Jobs. */
export { STATE_DIR };

export function tokenFile(workspace: string): string {
  return join(workspace, STATE_DIR, 'token');
}

/**
 * The token file's text (trimmed), or undefined when there is none. Opened without following a
 * link or waiting on a FIFO: a named pipe there would hang the start (or the CLI) before
 * anything is printed. Anything but a regular file is refused with a message naming it.
 */
async function readTokenFile(file: string): Promise<string | undefined> {
  try {
    return (await readRegularFile(file)).toString('utf8').trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof UnsafeFileError) {
      throw new PrivateStateError(`the token file ${file} is not a regular file (${err.kind}); remove it and start again (a new token is made), or give the token with --token`);
    }
    throw err;
  }
}

/**
 * The token kept in the workspace: read it, or create it once (mode 0600, exclusive create so two
 * starts racing agree on one token).
 */
export async function loadOrCreateToken(workspace: string): Promise<string> {
  const file = tokenFile(workspace);
  const existing = await readTokenFile(file);
  if (existing) return existing;
  await ensurePrivateDir(join(workspace, STATE_DIR));
  const token = randomBytes(32).toString('base64url');
  try {
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const written = await readTokenFile(file); // another start won the race (or an empty file is in the way)
    if (written) return written;
    throw new PrivateStateError(`the token file ${file} is empty; remove it and start again (a new token is made)`);
  }
}

/** Reads the workspace token without creating one (CLI default); a file that is not a regular one counts as none. */
export async function readToken(workspace: string): Promise<string | undefined> {
  return readTokenFile(tokenFile(workspace)).catch(() => undefined);
}
