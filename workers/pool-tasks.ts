import type { MessagePort } from 'node:worker_threads';
import type { ShellOutput } from '../schemas/machine.js';
import type { ShellRequest } from './shell.js';
import type { OutputChunk } from './output-stream.js';
import type { PreviewOutcome, PreviewRequest } from './preview/preview.js';
import type { CsvRowsOutcome, CsvRowsRequest } from './preview/csv-rows.js';

/**
 * The typed messages of the thread pool: one entry per kind of work, naming its input and output.
 * A capability that adds work to the pool adds an entry here and a handler in `pool-worker.ts`.
 */
export interface PoolTasks {
  /** Round-trips its input; used by tests and benchmarks to measure the pool itself. */
  echo: { input: { value: unknown }; output: { value: unknown } };
  /** Runs one `shell` command in its own process group (the abort kills the group); notes: its output as written. */
  shell: { input: ShellRequest; output: ShellOutput; note: OutputChunk };
  /** Workspace file preview (supervisor/workspace). */
  preview: { input: PreviewRequest; output: PreviewOutcome };
  /** Counts the data rows of a workspace CSV file (count_csv_rows). */
  'csv-rows': { input: CsvRowsRequest; output: CsvRowsOutcome };
}

export type PoolKind = keyof PoolTasks;

/** What a kind of work tells the main thread while it runs (nothing for most). */
export type PoolNote<K extends PoolKind> = PoolTasks[K] extends { note: infer N } ? N : never;

/** The last message a worker posts on the port of a run: every note before it has been delivered. */
export const NOTES_DONE = 'done';

/**
 * What the main thread posts to a worker. `abort` is a port that receives one message on abort;
 * the worker posts its notes back on it, then NOTES_DONE.
 */
export interface PoolMessage<K extends PoolKind = PoolKind> {
  kind: K;
  input: PoolTasks[K]['input'];
  abort: MessagePort;
}
