import { setTimeout as delay } from 'node:timers/promises';
import { killProcessTree } from '../../workers/kill-tree.js';
import { collectTree } from '../../workers/process-tree.js';

/** Grace between SIGTERM and SIGKILL when a Task is cancelled. */
export const CANCEL_GRACE_MS = 3000;
/** Bound on waiting for SIGKILLed processes to disappear. */
const GONE_WITHIN_MS = 5000;
const POLL_MS = 25;

/**
 * Cancels a worker: its process group and every descendant (also those that left the group with
 * `setsid`) get SIGTERM, then SIGKILL after the grace period (the shared `killProcessTree`).
 * Resolves once the runner has exited and nothing of its group or tree is left, so the record
 * can be settled as cancelled.
 */
export async function stopWorker(pid: number, exited: Promise<unknown>): Promise<void> {
  await killProcessTree(pid, CANCEL_GRACE_MS);
  const deadline = Date.now() + GONE_WITHIN_MS;
  await Promise.race([exited, delay(GONE_WITHIN_MS)]);
  while (Date.now() < deadline && (await collectTree([pid])).length > 0) await delay(POLL_MS);
}
