import type { MessagePort } from 'node:worker_threads';
import type { ShellOutput } from '../schemas/machine.js';
import type { ShellRequest } from './shell.js';
import type { PreviewOutcome, PreviewRequest } from './preview/preview.js';

/**
 * The typed messages of the thread pool: one entry per kind of work, naming its input and output.
 * A capability that adds work to the pool adds an entry here and a handler in `pool-worker.ts`.
 */
export interface PoolTasks {
  /** Round-trips its input; used by tests and benchmarks to measure the pool itself. */
  echo: { input: { value: unknown }; output: { value: unknown } };
  /** Runs one `shell` command in its own process group (the abort kills the group). */
  shell: { input: ShellRequest; output: ShellOutput };
  /** Workspace file preview (supervisor/workspace). */
  preview: { input: PreviewRequest; output: PreviewOutcome };
}

export type PoolKind = keyof PoolTasks;

/** What the main thread posts to a worker. `abort` is a port that receives one message on abort. */
export interface PoolMessage<K extends PoolKind = PoolKind> {
  kind: K;
  input: PoolTasks[K]['input'];
  abort: MessagePort;
}
