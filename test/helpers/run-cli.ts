import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI entry (dist/bin/cli.js). */
export const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a real process with exactly `env` (plus PATH), so no token or address of
 * the machine running the tests leaks in; resolves with its exit code and output.
 */
export function runCli(args: readonly string[], env: Record<string, string>, opts: { cwd?: string } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 120_000, ...opts }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
