import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
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

/** Exit code recorded for a cancelled Task (128 + SIGINT, as shells report it). */
export const CANCELLED_EXIT_CODE = 130;

export function isTerminal(state: TaskState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

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

/**
 * Atomic replace for the child: temp file, fsync, rename. Readers see the old or the new record,
 * never a torn one. Synchronous because the runner must finish a write before the next one starts.
 */
export function writeJsonAtomicSync(file: string, value: unknown): void {
  const temp = tempPathFor(file);
  const fd = openSync(temp, 'w', 0o644);
  try {
    writeSync(fd, toJsonText(value));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** The same atomic replace for the supervisor, without blocking its event loop. */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const temp = tempPathFor(file);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(toJsonText(value));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
}
