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
 * Most processes a machine could start per millisecond (50,000 a second: far above what fork and
 * exec sustain). A run shorter than pid_max / this cannot have seen the pid counter go round.
 */
const FORKS_PER_MS_BOUND = 50;
/** A pid range longer than this is looked at through the directory listing instead. */
const MAX_RANGE = 4096;

/** Where to look for what a command left: when and at which pid it started. */
export interface CommandSpan {
  /** Clock ticks since boot, less a margin (clockTicksNow), before it started. */
  readonly since: number;
  /** Date.now() when it started. */
  readonly startedAt: number;
  /** Its pid: every process it started got a later one, until the pid counter wraps. */
  readonly firstPid: number;
  /** The last pid handed out just after it started (lastPid), or NaN when unknown. */
  readonly lastAtStart: number;
}

/** The span of what starts from now on (a run about to begin): every pid handed out after this moment. */
export function spanFromNow(): CommandSpan {
  const last = lastPid();
  return { since: clockTicksNow(), startedAt: Date.now(), firstPid: last, lastAtStart: last };
}

/**
 * The last pid handed out in this pid namespace (the fifth field of /proc/loadavg), NaN when it
 * cannot be read.
 */
export function lastPid(): number {
  try {
    return readNumber('/proc/loadavg', 4);
  } catch {
    return Number.NaN;
  }
}

function readNumber(file: string, field = 0): number {
  return Number(readFileSync(file, 'latin1').trim().split(/\s+/)[field]);
}

/**
 * The pids that may be the command's or its descendants'. Linux hands out pids in increasing
 * order and wraps at pid_max, so everything started since the command has a pid from its own to
 * the last one handed out (the fifth field of /proc/loadavg), unless the counter wrapped: then,
 * and for a run long enough to have gone all the way round, every process is looked at. A short
 * run on a machine with hundreds of processes reads a handful of /proc entries instead of all.
 */
function candidatePids(span: CommandSpan): Iterable<number> {
  const all = () => readdirSync('/proc').map(Number).filter(Number.isInteger);
  // The counter read as the command started must name it (a /proc/loadavg of another pid
  // namespace, as some container tools serve, would not): else it says nothing about this run.
  const counted = span.lastAtStart >= span.firstPid && span.lastAtStart - span.firstPid < MAX_RANGE;
  try {
    const last = lastPid();
    const elapsed = Date.now() - span.startedAt;
    if (!counted || !(last >= span.firstPid) || last - span.firstPid >= MAX_RANGE || elapsed * FORKS_PER_MS_BOUND >= readNumber('/proc/sys/kernel/pid_max')) return all();
    return Array.from({ length: last - span.firstPid + 1 }, (_, i) => span.firstPid + i);
  } catch {
    return all();
  }
}

/**
 * Whether anything of the run may be left: a member of this runner's process group, or a process
 * started since the command that carries `mark`. One synchronous pass over /proc (the runner has
 * nothing else to do at this point): with the promises of the asynchronous walk
 * (workers/process-tree.ts) the same look cost a short run a third of its CPU, and a pass over
 * every process ~12 ms of a short run's ~28 here. Only when it finds something does the full kill
 * (killLeftovers) run.
 */
function anyLeftover(mark: string, span: CommandSpan): boolean {
  const { since } = span;
  for (const pid of candidatePids(span)) {
    if (pid === process.pid) continue;
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

/** Ends what the run marked `mark` left (its command started at `span`); true once nothing of it is left. */
export async function endLeftovers(mark: string, span: CommandSpan): Promise<boolean> {
  const ended = !anyLeftover(mark, span) || (await killLeftovers(mark, span.since, LEFTOVER_GRACE_MS));
  survived ||= !ended;
  return ended;
}

/** Whether a process of a run this runner served is still alive, though it was killed. */
export function leftoversSurvived(): boolean {
  return survived;
}
