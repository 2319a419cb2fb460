import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TaskState } from '../../schemas/tasks.js';

/**
 * The files of one Task directory and how they are written. Shared by the task runner (child) and
 * the supervisor, so it imports nothing but node built-ins.
 */
export const TASK_FILES = Object.freeze({
  status: 'status.json',
  metadata: 'metadata.json',
  events: 'events.jsonl',
  log: 'task.log',
});

/**
 * Files a runner adds beside the spec's records (docs/task-protocol.md): the metric points a Task
 * reported, and the validated inputs a command Task reads.
 */
export const TASK_REPORT_FILES = Object.freeze({
  metrics: 'metrics.jsonl',
  inputs: 'inputs.json',
});

/** Exit code recorded for a cancelled Task (128 + SIGINT, as shells report it). */
export const CANCELLED_EXIT_CODE = 130;

/** succeeded, failed and cancelled are terminal; queued and running are not. */
export function isTerminal(state: TaskState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

/** The timestamp format of every record: ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** JSON with non-finite numbers as null (spec: metadata), whatever nesting they sit in. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v));
}

let tempCounter = 0;
function tempPathFor(file: string): string {
  tempCounter = (tempCounter + 1) % 1_000_000;
  return join(dirname(file), `.${process.pid}.${tempCounter}.tmp`);
}

/** True for the temp files of `writeJsonAtomic*` (dot name, `.tmp` suffix): never a record. */
export function isTempFile(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Writes all of `data` at the descriptor's position: `write(2)` may write less than asked (a
 * nearly full disk), and a single call that ignores the count leaves a torn file.
 */
export function writeAllSync(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
}

/** How a record is written: `durable` fsyncs before the rename (terminal records, metadata). */
export interface WriteOptions {
  durable?: boolean;
}

/**
 * Atomic replace for the child: temp file, every byte written, fsync, rename. Readers see the old
 * or the new record, never a torn one; on any failure the temp file is removed and the old record
 * stays. Synchronous because the runner must finish a write before the next one starts.
 */
export function writeJsonAtomicSync(file: string, value: unknown, opts: WriteOptions = {}): void {
  const temp = tempPathFor(file);
  try {
    const fd = openSync(temp, 'w', 0o644);
    try {
      writeAllSync(fd, toJsonText(value));
      if (opts.durable !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * The same atomic replace for the supervisor, without blocking its event loop. `durable: false`
 * skips the fsync for files that mean nothing after a machine crash (which kills every runner).
 * `FileHandle.writeFile` loops until every byte is written.
 */
export async function writeJsonAtomic(file: string, value: unknown, opts: WriteOptions = {}): Promise<void> {
  const temp = tempPathFor(file);
  try {
    const handle = await open(temp, 'w', 0o644);
    try {
      await handle.writeFile(toJsonText(value));
      if (opts.durable !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
