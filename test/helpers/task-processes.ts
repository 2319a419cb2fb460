import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, listProcesses } from '../../workers/process-tree.js';
import { waitFor } from './wait-for.js';

const entries = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

/**
 * The status file's object, read like the service reads records: a FIFO or link named
 * status.json is skipped, not waited on. Synchronous: every test service's teardown reads every
 * record of its workspace (thousands in some tests), and one blocking read each costs a fraction
 * of the promise and thread-pool round trips of the asynchronous calls.
 */
function readStatus(file: string): Record<string, unknown> | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const parsed: unknown = JSON.parse(readFileSync(fd, 'utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The pids recorded by still-active status files (Task process-group leaders). Finished records
 * are skipped: their pid may already belong to an unrelated process.
 */
async function recordedRuns(workspace: string): Promise<Array<{ pid: number; task: string }>> {
  const runs: Array<{ pid: number; task: string }> = [];
  for (const type of entries(workspace)) {
    for (const id of entries(join(workspace, type))) {
      const status = readStatus(join(workspace, type, id, 'status.json'));
      if (typeof status?.['pid'] === 'number' && (status['state'] === 'queued' || status['state'] === 'running')) runs.push({ pid: status['pid'], task: `${type}/${id}` });
    }
  }
  return runs;
}

/** The Tasks of the workspace whose recorded process still runs, as `type/id (pid N)`. */
export async function liveTaskProcesses(workspace: string): Promise<string[]> {
  const live: string[] = [];
  for (const run of await recordedRuns(workspace)) if ((await isRunning(run.pid)) || !(await groupGone(run.pid))) live.push(`Task ${run.task} (pid ${run.pid})`);
  return live;
}

/** Kills every Task process group recorded in the workspace and waits until they are gone. */
export async function killTaskProcesses(workspace: string, extraPids: number[] = []): Promise<void> {
  const pids = [...(await recordedRuns(workspace)).map((r) => r.pid), ...extraPids];
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  await waitFor(async () => {
    for (const pid of pids) if (!(await groupGone(pid)) || (await isRunning(pid))) return false;
    return true;
  }, 10_000, 'task processes to end');
}

/** True while the process exists and is not a zombie. */
export function isRunning(pid: number): Promise<boolean> {
  return isAlive(pid);
}

/** True when no live process is left in the process group. */
export async function groupGone(pgid: number): Promise<boolean> {
  return (await listProcesses()).every((p) => p.pgid !== pgid || p.state === 'Z');
}

