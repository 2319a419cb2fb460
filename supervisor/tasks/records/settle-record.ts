import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { TaskStatus } from '../../../schemas/tasks.js';
import { CANCELLED_EXIT_CODE, isTerminal, nowIso, TASK_FILES, writeJsonAtomic } from '../../../core/task-record/record-files.js';
import type { RunnerEnd } from '../engines/executor.js';
import { readStatus } from './records.js';

/** How often a terminal record that could not be written (a full disk) is tried again. */
export const RECORD_RETRY_MS = 2000;

/** What the service records for a run whose runner is gone without a terminal status. */
export function describeEnd(end: RunnerEnd | null, cancelled: boolean): Pick<TaskStatus, 'state' | 'exit_code' | 'error'> {
  if (cancelled) return { state: 'cancelled', exit_code: CANCELLED_EXIT_CODE, error: 'CancelledError: the Task was cancelled' };
  if (end === null) return { state: 'failed', exit_code: 1, error: 'RuntimeError: worker lost: the service stopped before the Task started' };
  switch (end.kind) {
    case 'spawn-failed':
      return { state: 'failed', exit_code: 1, error: `RuntimeError: the task runner could not start: ${end.message}` };
    case 'lost':
      return { state: 'failed', exit_code: 1, error: `RuntimeError: worker lost: process ${end.pid ?? '(never started)'} ended while the service was not watching it, without a terminal status` };
    case 'engine-ended':
      return { state: 'failed', exit_code: 1, error: `RuntimeError: ${end.reason}` };
    case 'time-limit':
      return { state: 'failed', exit_code: 1, error: `TimeoutError: the Task exceeded its time limit of ${end.seconds} s (resources.time_limit_s) and was stopped` };
    case 'exited': {
      const how = end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code}`;
      const code = end.code && end.code > 0 && end.code < 256 ? end.code : 1;
      return { state: 'failed', exit_code: code, error: `RuntimeError: the task runner ${how} without a terminal status (see its log)` };
    }
  }
}

/** The run a settlement is about. */
export interface RunFiles {
  readonly id: string;
  readonly type: string;
  readonly dir: string;
  readonly runId: string;
}

/**
 * The terminal status of a run whose runner is gone: the terminal status the runner wrote stands;
 * otherwise `fallback` (the last status the service knew) ends as `describeEnd` says. Null when
 * the directory now holds another run (replaced from outside): that record is not ours to touch.
 */
export async function terminalStatusOf(run: RunFiles, fallback: TaskStatus | null, end: RunnerEnd | null, cancelled: boolean): Promise<{ status: TaskStatus; write: boolean } | null> {
  const current = await readStatus(run.dir, run.id, run.type);
  if (current && current.run_id !== run.runId) return null;
  if (current && isTerminal(current.state)) return { status: current, write: false };
  const base = current ?? fallback;
  return base ? { status: { ...base, ...describeEnd(end, cancelled), finished_at: nowIso() }, write: true } : null;
}

/**
 * Writes a terminal status the service decided, durably, once. False when it could not (ENOSPC,
 * EIO: logged); true when it landed or the directory is gone. The caller has just seen this run's
 * record in place (`terminalStatusOf`, or the retry's own check).
 */
export async function writeTerminalRecord(run: RunFiles, status: TaskStatus): Promise<boolean> {
  try {
    await writeJsonAtomic(join(run.dir, TASK_FILES.status), status);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true; // the directory is gone
    console.error(`taskyard: cannot write the ${status.state} record of ${run.id} (${(err as Error).message}); trying again every ${RECORD_RETRY_MS / 1000} s`);
    return false;
  }
}

/**
 * Tries `writeTerminalRecord` again every RECORD_RETRY_MS until it lands, until `stillOurs` says
 * the index no longer holds this run's status (deleted or replaced meanwhile), or until the service
 * stops. Never rejects.
 */
export async function retryTerminalRecord(run: RunFiles, status: TaskStatus, stillOurs: () => boolean, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await delay(RECORD_RETRY_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted || !stillOurs()) return;
    // Replaced or removed while the disk was full: nothing of ours left to record.
    const onDisk = await readStatus(run.dir, run.id, run.type);
    if (onDisk && onDisk.run_id !== run.runId) return;
    if (await writeTerminalRecord(run, status)) {
      console.error(`taskyard: the ${status.state} record of ${run.id} is written now`);
      return;
    }
  }
}
