import { join } from 'node:path';
import type { TaskStatus } from '../../schemas/tasks.js';
import { CANCELLED_EXIT_CODE, isTerminal, nowIso, TASK_FILES, writeJsonAtomic } from '../../workers/task-runner/record-files.js';
import { readStatus } from './records.js';
import type { TaskIndex } from './task-index.js';
import type { TaskIdParts } from './task-ids.js';

/** How a worker ended, as far as the supervisor can tell. */
export type WorkerEnd =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'lost'; pid: number | null }
  | { kind: 'spawn-failed'; message: string };

/** What the supervisor records for a run whose worker is dead without a terminal status. */
export function describeEnd(end: WorkerEnd, cancelled: boolean): Pick<TaskStatus, 'state' | 'exit_code' | 'error'> {
  if (cancelled) return { state: 'cancelled', exit_code: CANCELLED_EXIT_CODE, error: 'CancelledError: the Task was cancelled' };
  switch (end.kind) {
    case 'spawn-failed':
      return { state: 'failed', exit_code: 1, error: `RuntimeError: the task runner could not start: ${end.message}` };
    case 'lost':
      return { state: 'failed', exit_code: 1, error: `RuntimeError: worker lost: process ${end.pid ?? '(never started)'} ended while the service was not watching it, without a terminal status` };
    case 'exited': {
      const how = end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code}`;
      const code = end.code && end.code > 0 && end.code < 256 ? end.code : 1;
      return { state: 'failed', exit_code: code, error: `RuntimeError: the task runner ${how} without a terminal status` };
    }
  }
}

/** The run a settlement is about: a record that now holds another run is left alone. */
export interface FinalizeTarget {
  id: string;
  parts: TaskIdParts;
  dir: string;
  runId: string;
}

/**
 * Settles a run whose worker is gone: a terminal status the child wrote stands (and is returned
 * with `written: false`); otherwise the supervisor records the end. A record that now belongs to
 * another run is left alone.
 */
export async function finalizeRun(index: TaskIndex, target: FinalizeTarget, end: WorkerEnd, cancelled: boolean): Promise<{ status: TaskStatus | null; written: boolean }> {
  // The watcher usually read the worker's terminal status already, and that one is final.
  const known = index.get(target.id)?.status;
  if (known?.run_id === target.runId && isTerminal(known.state)) return { status: known, written: false };
  const current = await readStatus(target.dir, target.id, target.parts.type);
  if (!current || current.run_id !== target.runId) return { status: current, written: false };
  if (isTerminal(current.state)) {
    index.setStatus(target.id, target.parts, current);
    return { status: current, written: false };
  }
  const status: TaskStatus = { ...current, ...describeEnd(end, cancelled), finished_at: nowIso() };
  await writeJsonAtomic(join(target.dir, TASK_FILES.status), status);
  index.setStatus(target.id, target.parts, status, false);
  return { status, written: true };
}
