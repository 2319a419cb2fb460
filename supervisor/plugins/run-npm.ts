import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runShell } from '../../workers/shell.js';
import { ValueError } from '../../core/errors.js';

/** npm gets this long per command; a hung registry lookup must not hold the plugin lock forever. */
const NPM_TIMEOUT_S = 300;

/**
 * Flags for every npm command: no audit, funding or update chatter, and dependencies from the
 * local cache when it has them. Lifecycle scripts never run (a Task-only plugin needs none, and
 * nothing should execute during an API call but npm itself). An offline machine can install a
 * plugin whose dependencies are bundled in its tarball (`bundleDependencies`) or already cached.
 */
export const NPM_FLAGS: readonly string[] = Object.freeze(['--no-audit', '--no-fund', '--no-update-notifier', '--prefer-offline', '--ignore-scripts', '--loglevel=error']);

/** The npm that ships with this Node (found next to it), else whatever `npm` is on PATH. */
function npmCommand(): string[] {
  const bundled = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  return existsSync(bundled) ? [process.execPath, bundled] : ['npm'];
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/** The lines of npm's output worth showing: its errors, without the log-file boilerplate. */
function npmProblem(stderr: string, stdout: string): string {
  const lines = `${stderr}\n${stdout}`.split('\n').map((l) => l.trim()).filter(Boolean);
  const errors = lines.filter((l) => /^npm (error|ERR!)/.test(l) && !/A complete log of this run|^npm error\s*$/.test(l));
  return (errors.length ? errors : lines).slice(0, 8).join(' | ').slice(0, 2000) || 'no output';
}

/**
 * Runs one npm command in `cwd` (a plugin prefix) as a child process: killed with its process
 * tree on timeout or abort. A nonzero exit is a ValueError carrying npm's own error lines.
 */
export async function runNpm(args: readonly string[], cwd: string, signal: AbortSignal): Promise<void> {
  const command = [...npmCommand(), ...args, ...NPM_FLAGS].map(quote).join(' ');
  const out = await runShell({ command, timeout: NPM_TIMEOUT_S, cwd }, signal);
  signal.throwIfAborted();
  if (out.exit_code === null) throw new ValueError(`npm ${args[0]} did not finish within ${NPM_TIMEOUT_S} seconds`);
  if (out.exit_code !== 0) throw new ValueError(`npm ${args[0]} failed: ${npmProblem(out.stderr, out.stdout)}`);
}
