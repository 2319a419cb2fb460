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

async function signalAll(groupLeader: number, entries: readonly ProcessEntry[], signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(-groupLeader, signal);
  } catch {
    // The group is already empty; descendants outside it are signalled one by one below.
  }
  await Promise.all(entries.map((e) => signalEntry(e, signal)));
}

async function anyAlive(entries: readonly ProcessEntry[]): Promise<boolean> {
  const alive = await Promise.all(entries.map((e) => isAlive(e.pid, e.startTime)));
  return alive.includes(true);
}

/**
 * Kills a command's whole process tree: its process group plus every descendant found by walking
 * /proc (including ones that called `setsid`), found BEFORE the first signal because a killed
 * parent's children are re-parented out of reach. SIGTERM first; after `graceMs` (or once all are
 * gone) the tree is walked again for late children and whatever remains gets SIGKILL; resolves once
 * those are gone too (bounded by KILL_WAIT_MS).
 */
export async function killProcessTree(root: number, graceMs = KILL_GRACE_MS): Promise<void> {
  const victims = await collectTree([root]);
  await signalAll(root, victims, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (await anyAlive(victims))) await delay(POLL_MS);
  const survivors: ProcessEntry[] = [];
  for (const e of victims) if (await isAlive(e.pid, e.startTime)) survivors.push(e);
  if (survivors.length === 0) return;
  const late = await collectTree(survivors.map((e) => e.pid));
  const killed = [...survivors, ...late];
  await signalAll(root, killed, 'SIGKILL');
  // SIGKILL is not instant on a busy machine: the tree is dead when this resolves, not just signalled.
  const gone = Date.now() + KILL_WAIT_MS;
  while (Date.now() < gone && (await anyAlive(killed))) await delay(POLL_MS);
}
