import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { compileC } from './compile-c.js';

/** What the C follower client (sse-follow-client.c) reports for one window. */
export interface FollowWindow {
  /** Followers that got their response head by the time the window started. */
  opened: number;
  /** Log lines received, all followers together (also those stamped outside the window). */
  lines: number;
  /** Lines stamped inside the window: those the delays are taken over. */
  timed: number;
  results: number;
  /** Followers that failed to open or were cut off before their result. */
  errors: number;
  /** Log line -> follower delay percentiles, ms. */
  p50: number;
  p99: number;
  max: number;
  /** The client's own CPU seconds over the window. */
  window_cpu_s: number;
}

export interface FollowClientOptions {
  windowMs: number;
  /** Start the window after this long even if some followers never opened (they count as errors). */
  openLimitMs: number;
  /** Connections being opened at once. */
  concurrency: number;
  /** Loopback source addresses to spread connections over. */
  sources: number;
  /** Called once every follower got its response head (the measured window starts). */
  onSteady: () => void;
}

/** Compiles the C follower client into `dir`: its path, or why there is none. */
export const buildFollowClient = (dir: string): Promise<string | Error> => compileC('bench/lib/sse-follow-client.c', dir);

/**
 * Runs the C follower client (`binary`, from buildFollowClient): `perTask` SSE `stream_task`
 * followers of each Task on the server at `port`, measured over one window once all are open.
 */
export function followWindow(binary: string, port: number, token: string, taskIds: string[], perTask: number, opts: FollowClientOptions): Promise<FollowWindow> {
  const args = [port, token, perTask, opts.windowMs, opts.openLimitMs, opts.concurrency, opts.sources, ...taskIds].map(String);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let result: FollowWindow | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'STEADY') opts.onSteady();
      else if (line.startsWith('{')) result = JSON.parse(line) as FollowWindow;
    });
    child.once('error', reject);
    child.once('close', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`sse-follow-client exited with ${code} without a result`))));
  });
}
