import { readFile } from 'node:fs/promises';
import { cannotTellNow, listProcesses, readProcess, type ProcessEntry } from '../../../workers/process-tree.js';
import { runIdOfCommandLine } from '../../../runner/runner-file.js';

/**
 * Task runner processes, recognised through /proc: a runner's command line names the runner file
 * and its run (`runner.cjs --run <run_id>`; a pooled runner writes it into its title when it takes
 * a run). A pid alone could have been reused by anything; a runner process naming the run is that
 * run's runner. This is how a restarted service finds the live runners of its predecessor, and how
 * the executor learns whether a spawner that died mid-request started a run after all, without
 * keeping files about either.
 */

/** The run a process works for, when it is a task runner (and still there); throws when /proc cannot be read now (`cannotTellNow`). */
async function runOf(pid: number): Promise<string | null> {
  try {
    return runIdOfCommandLine(await readFile(`/proc/${pid}/cmdline`, 'latin1'));
  } catch (err) {
    if (cannotTellNow(err)) throw err;
    return null; // gone meanwhile, or not ours to read
  }
}

/** Every live task runner by run_id (zombies excluded: they can no longer do anything). */
export async function findRunners(): Promise<Map<string, ProcessEntry>> {
  const runners = new Map<string, ProcessEntry>();
  for (const entry of await listProcesses()) {
    if (entry.state === 'Z' || entry.state === 'X') continue;
    const runId = await runOf(entry.pid).catch(() => null);
    if (runId) runners.set(runId, entry);
  }
  return runners;
}

/** The process of `pid` when it is the live runner of `runId`; throws when /proc cannot be read now (`cannotTellNow`). */
export async function runnerOf(pid: number, runId: string): Promise<ProcessEntry | undefined> {
  const entry = await readProcess(pid);
  if (!entry || entry.state === 'Z' || entry.state === 'X') return undefined;
  return (await runOf(pid)) === runId ? entry : undefined;
}
