import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';

const CLI = join(PACKAGE_ROOT, 'dist', 'bin', 'cli.js');
/** A start that neither listens nor exits within this long is taken as hung (a FIFO opened for reading blocks). */
const START_BOUND_MS = 30_000;

/** How a `taskyard serve` start ended: listening, exited, or neither within the bound. */
export type ServeOutcome = { url: string } | { code: number | null } | { hung: true };

export interface Serving {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  outcome: Promise<ServeOutcome>;
}

/**
 * Runs `taskyard serve --port 0 <args>` as its own process; `outcome` resolves once it listens,
 * exits or passes the bound. A serve still running is stopped (SIGTERM, then SIGKILL when it does
 * not end) before the test ends.
 */
export function serveCli(t: Test, args: readonly string[]): Serving {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, 'SIGTERM');
    const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, 'SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  });
  let output = '';
  const outcome = new Promise<ServeOutcome>((resolve) => {
    const timer = setTimeout(() => resolve({ hung: true }), START_BOUND_MS);
    const onData = (d: Buffer) => {
      output += d.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code });
    });
  });
  return { child, output: () => output, outcome };
}

/**
 * Writes a config file (removed after the test) for a `serve` whose Task runs are not the point: no
 * Task runner started ahead of need (each is a Node start thrown away at exit) and no GPU probe.
 * Answers its path, for `--config`.
 */
export async function leanServeConfig(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-serve-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'lean.yaml');
  await writeFile(file, 'service:\n  runner_pool_size: 0\n  gpus: 0\n');
  return file;
}
