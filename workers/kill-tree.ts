import { setTimeout as delay } from 'node:timers/promises';
import { collectTree, isAlive, type ProcessEntry } from './process-tree.js';

/** How long processes get to exit after SIGTERM before SIGKILL. */
export const KILL_GRACE_MS = 2_000;
const POLL_MS = 25;
/** How long a SIGKILLed tree may take to be gone (it cannot refuse; only a busy CPU delays it). */
const KILL_WAIT_MS = 1_000;

/** Signals one process unless its pid now names a different process (pid reuse). */
async function signalEntry(entry: ProcessEntry, signal: NodeJS.Signals): Promise<void> {
  if (!(await isAlive(entry.pid, entry.startTime))) return;
  try {
    process.kill(entry.pid, signal);
  } catch {
    // Gone between the check and the kill: nothing left to do.
  }
}

/**
 * Signals the group, then each entry outside it. A member of the group is not signalled twice: a
 * second SIGTERM landing in a cancelled Python script's `finally` (taskyard_task raises Cancelled
 * on each) cut its clean-up short.
 */
async function signalAll(groupLeader: number, entries: readonly ProcessEntry[], signal: NodeJS.Signals): Promise<void> {
  let groupSignalled = false;
  try {
    process.kill(-groupLeader, signal);
    groupSignalled = true;
  } catch {
    // The group is already empty; descendants outside it are signalled one by one below.
  }
  const outside = groupSignalled ? entries.filter((e) => e.pgid !== groupLeader) : entries;
  await Promise.all(outside.map((e) => signalEntry(e, signal)));
}

async function aliveOf(entries: readonly ProcessEntry[]): Promise<ProcessEntry[]> {
  const alive = await Promise.all(entries.map((e) => isAlive(e.pid, e.startTime)));
  return entries.filter((_, i) => alive[i]);
}

/** Rounds of SIGKILL at most: each looks again for processes the previous survivors started. */
const KILL_ROUNDS = 3;

/**
 * Kills a command's whole process tree: its process group plus every descendant found by walking
 * /proc (including ones that called `setsid`), found BEFORE the first signal because a killed
 * parent's children are re-parented out of reach. With `mark` (an environment entry `NAME=value`
 * every process the command started inherits), processes that both left the group and lost their
 * parent are found by it. SIGTERM first; after `graceMs` (or once all are gone) the tree is looked
 * up again for late children and whatever remains gets SIGKILL, in a few bounded rounds; resolves
 * once those are gone too (bounded by KILL_WAIT_MS a round).
 */
export async function killProcessTree(root: number, graceMs = KILL_GRACE_MS, mark?: string): Promise<void> {
  let victims = await collectTree([root], mark === undefined ? undefined : { entry: mark });
  // Later looks, once the root is gone, still skip what is older than it (most of the machine).
  const rootStart = victims.find((e) => e.pid === root)?.startTime;
  const later = mark === undefined ? undefined : { entry: mark, ...(rootStart === undefined ? {} : { since: Number(rootStart) }) };
  await signalAll(root, victims, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (await aliveOf(victims)).length > 0) await delay(POLL_MS);
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const survivors = await aliveOf(victims);
    // Without a mark nothing new can be found from no survivors; with one, a process started
    // during the grace (a daemon forking again) is still found by it.
    if (survivors.length === 0 && mark === undefined) return;
    const known = new Set(survivors.map((e) => e.pid));
    const late = (await collectTree([...known], later)).filter((e) => !known.has(e.pid));
    victims = [...survivors, ...late];
    if (victims.length === 0) return;
    await signalAll(root, victims, 'SIGKILL');
    // SIGKILL is not instant on a busy machine: the tree is dead when this resolves, not just signalled.
    const gone = Date.now() + KILL_WAIT_MS;
    while (Date.now() < gone && (await aliveOf(victims)).length > 0) await delay(POLL_MS);
  }
}

/**
 * Kills what a finished command left behind, from inside the runner that served it (which lives
 * on): the members of the caller's process group and every process carrying `mark` started since
 * `since` (clock ticks since boot), with their descendants, the caller excepted. SIGTERM, then
 * SIGKILL after `graceMs`, in a few bounded rounds. True once none is left.
 */
export async function killLeftovers(mark: string, since: number, graceMs = KILL_GRACE_MS): Promise<boolean> {
  const find = async () => (await collectTree([process.pid], { entry: mark, since })).filter((e) => e.pid !== process.pid);
  let victims = await find();
  if (victims.length === 0) return true;
  await Promise.all(victims.map((e) => signalEntry(e, 'SIGTERM')));
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (await aliveOf(victims)).length > 0) await delay(POLL_MS);
  for (let round = 0; round < KILL_ROUNDS; round++) {
    victims = await find();
    if (victims.length === 0) return true;
    await Promise.all(victims.map((e) => signalEntry(e, 'SIGKILL')));
    const gone = Date.now() + KILL_WAIT_MS;
    while (Date.now() < gone && (await aliveOf(victims)).length > 0) await delay(POLL_MS);
  }
  return (await find()).length === 0;
}
