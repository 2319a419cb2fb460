/**
 * What a finished command left behind, found and ended from inside the runner that served it (the
 * runner lives on: its run's record is written, and a pooled runner serves the next run). Every
 * process the run started carries its mark (TASKYARD_RUN_ID), however it detached; those still in
 * the runner's process group are found by the group too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { killLeftovers } from '../workers/kill-tree.js';
import { parseStat } from '../workers/process-tree.js';

/** How long a command's leftovers get after SIGTERM before SIGKILL. */
const LEFTOVER_GRACE_MS = 1_000;
/** Clock ticks per second of /proc start times (USER_HZ). */
const CLOCK_TICKS = 100;

/** Now, in the clock ticks since boot of /proc start times, less a second's margin. */
export function clockTicksNow(): number {
  // /proc/uptime is in seconds; process start times are in clock ticks (USER_HZ, 100 on Linux).
  return Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * CLOCK_TICKS) - CLOCK_TICKS;
}

/**
 * Whether anything of the run may be left: a member of this runner's process group, or a process
 * started since `since` that carries `mark`. One synchronous pass over /proc (the runner has
 * nothing else to do at this point): with the promises of the asynchronous walk
 * (workers/process-tree.ts) the same look cost a short run a third of its CPU. Only when it finds
 * something does the full kill (killLeftovers) run.
 */
function anyLeftover(mark: string, since: number): boolean {
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let entry;
    try {
      entry = parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    } catch {
      continue; // gone meanwhile
    }
    if (!entry || entry.state === 'Z' || entry.state === 'X') continue;
    if (entry.pgid === process.pid) return true;
    if (Number(entry.startTime) < since) continue;
    try {
      if (`\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(`\0${mark}\0`)) return true;
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return false;
}

/** Something a run left survived SIGKILL (a process stuck in the kernel): this runner serves no other run. */
let survived = false;

/** Ends what the run marked `mark` left (started since `since`); true once nothing of it is left. */
export async function endLeftovers(mark: string, since: number): Promise<boolean> {
  const ended = !anyLeftover(mark, since) || (await killLeftovers(mark, since, LEFTOVER_GRACE_MS));
  survived ||= !ended;
  return ended;
}

/** Whether a process of a run this runner served is still alive, though it was killed. */
export function leftoversSurvived(): boolean {
  return survived;
}
