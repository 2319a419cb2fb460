import { fileURLToPath } from 'node:url';
import { RUN_FLAG } from './spawner-messages.js';

/** The task runner, bundled by the build into one file (see bundle.mjs). */
export const RUNNER = fileURLToPath(new URL('./runner.cjs', import.meta.url));

/** The spawner the local executor forks: it starts runners ahead of need (see spawner.ts). */
export const SPAWNER = fileURLToPath(new URL('./spawner.js', import.meta.url));

/** The run_id a task runner's command line names, or null for anything else (an idle runner included). */
export function runIdOfCommandLine(cmdline: string): string | null {
  if (!cmdline.includes(RUNNER)) return null;
  // A pooled runner rewrites its title, so the arguments may be split by spaces instead of NULs.
  const match = new RegExp(`${RUN_FLAG}[\\0 ]([0-9a-f]{32})(?:[\\0 ]|$)`).exec(cmdline);
  return match ? match[1]! : null;
}
