import { setTimeout as delay } from 'node:timers/promises';
import { findDescendants, groupMembers, isAlive, type ProcStat } from './proc-info.js';

/** Grace between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 3000;
const SETTLE_POLL_MS = 25;

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own descendants.
  }
}

function stillRunning(leader: number, strays: ProcStat[]): boolean {
  return groupMembers(leader).length > 0 || strays.some((p) => isAlive(p.pid, p.startTicks));
}

/**
 * Stops a Task's process group: SIGTERM to the group and to descendants that left it with
 * `setsid` (found through /proc before signalling), then SIGKILL to whatever is left once the
 * grace period ends. Resolves when nothing of the tree runs any more (bounded by the grace period
 * plus the time SIGKILL takes).
 */
export async function killProcessGroup(leader: number, leaderExited: Promise<unknown>, graceMs = KILL_GRACE_MS): Promise<void> {
  const strays = findDescendants(leader).filter((p) => p.pgrp !== leader);
  signal(-leader, 'SIGTERM');
  // A stray that called setsid leads its own group: signal that group, not only the process.
  for (const p of strays) signal(p.pgrp === p.pid ? -p.pid : p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  await Promise.race([leaderExited, delay(graceMs)]);
  while (Date.now() < deadline && stillRunning(leader, strays)) await delay(SETTLE_POLL_MS);
  signal(-leader, 'SIGKILL');
  for (const p of strays) if (isAlive(p.pid, p.startTicks)) signal(p.pgrp === p.pid ? -p.pid : p.pid, 'SIGKILL');
  const hardDeadline = Date.now() + 5000;
  while (Date.now() < hardDeadline && stillRunning(leader, strays)) await delay(SETTLE_POLL_MS);
  await Promise.race([leaderExited, delay(Math.max(0, hardDeadline - Date.now()))]);
}
