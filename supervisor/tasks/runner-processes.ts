import { readFile } from 'node:fs/promises';
import { listProcesses, readProcess, type ProcessEntry } from '../../workers/process-tree.js';
import { RUNNER } from '../../workers/task-runner/spawner-messages.js';

/**
 * Task runner processes, recognised through /proc: a runner's command line names the runner file
 * and its environment carries TASKYARD_RUN_ID, which the kernel keeps as it was at exec (Task code
 * changing process.env does not touch it). A pid alone could have been reused by anything; a pid
 * whose environment names the run is that run's worker. This is how a restarted service finds the
 * live workers of its predecessor, and how the launcher learns whether a spawner that died
 * mid-request started a run after all, without keeping files about either.
 */

/** The variable that names a runner's run; the launcher sets it. */
export const RUN_ID_VARIABLE = 'TASKYARD_RUN_ID';

/** The run a process works for, when it is a task runner (and still there). */
async function runOf(pid: number): Promise<string | null> {
  try {
    if (!(await readFile(`/proc/${pid}/cmdline`, 'latin1')).includes(RUNNER)) return null;
    const prefix = `${RUN_ID_VARIABLE}=`;
    const entry = (await readFile(`/proc/${pid}/environ`, 'latin1')).split('\0').find((e) => e.startsWith(prefix));
    return entry ? entry.slice(prefix.length) : null;
  } catch {
    return null; // gone meanwhile, or not ours to read
  }
}

/** Every live task runner by run_id (zombies excluded: they can no longer do anything). */
export async function findRunners(): Promise<Map<string, ProcessEntry>> {
  const runners = new Map<string, ProcessEntry>();
  for (const entry of await listProcesses()) {
    if (entry.state === 'Z' || entry.state === 'X') continue;
    const runId = await runOf(entry.pid);
    if (runId) runners.set(runId, entry);
  }
  return runners;
}

/** The process of `pid` when it is the live runner of `runId`. */
export async function runnerOf(pid: number, runId: string): Promise<ProcessEntry | undefined> {
  const entry = await readProcess(pid);
  if (!entry || entry.state === 'Z' || entry.state === 'X') return undefined;
  return (await runOf(pid)) === runId ? entry : undefined;
}
