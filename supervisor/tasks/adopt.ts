import { finalizeRun } from './finalize.js';
import { findRunners } from './runner-processes.js';
import type { TaskRecord } from './task-index.js';
import type { TaskRuntime } from './task-runtime.js';

/**
 * Queued or running records this service does not run itself: those a previous service left at
 * a restart, and those another tool writes into the workspace later. Each is adopted (its worker
 * still runs: a live runner process whose environment names the run) or marked failed with
 * "worker lost". Nothing stays `running` without a worker.
 */
export async function adoptOrSettle(rt: TaskRuntime, records: readonly TaskRecord[]): Promise<{ adopted: string[]; lost: string[] }> {
  const adopted: string[] = [];
  const lost: string[] = [];
  const orphans = records.filter((r) => r.status && !rt.launcher.isManaged(r.id));
  if (orphans.length === 0) return { adopted, lost };
  const runners = await findRunners();
  for (const record of orphans) {
    const status = record.status!;
    // Taken over meanwhile (an earlier event about the same record): nothing left to do.
    if (rt.launcher.isManaged(record.id)) continue;
    const runner = runners.get(status.run_id);
    const target = { id: record.id, parts: record.parts, dir: record.dir, runId: status.run_id };
    if (runner) {
      void rt.launcher.adopt({ ...target, registration: record.parts.registration, module: '' }, runner.pid, runner.startTime);
      rt.watch(record);
      adopted.push(record.id);
    } else {
      await finalizeRun(rt.index, target, { kind: 'lost', pid: status.pid }, false);
      lost.push(record.id);
    }
  }
  return { adopted, lost };
}

/** Restart: every record a previous service process left queued or running. */
export function adoptOrphans(rt: TaskRuntime): Promise<{ adopted: string[]; lost: string[] }> {
  return adoptOrSettle(rt, rt.index.active());
}
