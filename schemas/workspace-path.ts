import { homedir } from 'node:os';
import { resolve } from 'node:path';

// Node built-ins only: the CLI imports this and must start fast.

/** The built-in workspace. */
export const DEFAULT_WORKSPACE = '~/.taskyard/workspace';

/** Resolves a workspace path as the service does: `~` is the home directory, then absolute. */
export function resolveWorkspace(path: string = DEFAULT_WORKSPACE): string {
  return resolve(path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path);
}
