import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { cannotTellNow, isAlive, listProcesses, readProcess, type ProcessEntry } from '../../../workers/process-tree.js';
import { runIdOfCommandLine } from '../../../runner/runner-file.js';

/**
 * Task runner processes, recognised through /proc: a runner's command line names the runner file
 * and its run (`runner.cjs --run <run_id>`; a pooled runner writes it into its title when it takes
 * a run). A pid alone could have been reused by anything; a runner process naming the run is that
 * run's runner. This is how a restarted service finds the live runners of its predecessor, and how
 * the executor learns whether a spawner that died mid-request started a run after all, without
 * keeping files about either.
 */

/** How often a runner whose exit nobody reports (adopted, or its spawner died) is checked in /proc. */
const ORPHAN_POLL_MS = 250;

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
async function runnerOf(pid: number, runId: string): Promise<ProcessEntry | undefined> {
  const entry = await readProcess(pid);
  if (!entry || entry.state === 'Z' || entry.state === 'X') return undefined;
  return (await runOf(pid)) === runId ? entry : undefined;
}

/**
 * Resolves once the runner `pid` of `runId` is gone, or `stopping` is aborted (the service stops:
 * the runner goes on, a restarted service adopts it). This is the engine's one poll: such a runner
 * is not this process's child, so no exit event comes, and Node 20 has no pidfd to wait on. It is
 * recognised by its process start time (`startTime`, or read now while it still names its run), so
 * a later process reusing the pid is not taken for it.
 */
export async function untilGone(pid: number, runId: string, startTime: string | undefined, stopping: AbortSignal): Promise<void> {
  const since = startTime ?? (await startTimeOf(pid, runId, stopping));
  while (since !== undefined && !stopping.aborted && (await isAlive(pid, since))) await delay(ORPHAN_POLL_MS);
}

/**
 * The start time of `pid` while it is the runner of `runId`, else undefined. While /proc cannot be
 * read (the service out of descriptors: the very moment a spawner may die), it asks again rather
 * than take the runner for gone and settle a run that goes on.
 */
async function startTimeOf(pid: number, runId: string, stopping: AbortSignal): Promise<string | undefined> {
  for (;;) {
    try {
      return (await runnerOf(pid, runId))?.startTime;
    } catch (err) {
      if (stopping.aborted || !cannotTellNow(err)) return undefined;
      await delay(ORPHAN_POLL_MS);
    }
  }
}
