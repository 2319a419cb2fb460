import { finalizeRun } from './finalize.js';
import { findRunners } from './runner-processes.js';
import type { TaskRuntime } from './task-runtime.js';

/**
 * Restart: every record a previous service left queued or running is either adopted again (its
 * worker still runs: a live runner process whose environment names the run) or marked failed
 * with "worker lost". Nothing stays `running` without a worker.
 */
export async function adoptOrphans(rt: TaskRuntime): Promise<{ adopted: string[]; lost: string[] }> {
  const adopted: string[] = [];
  const lost: string[] = [];
  const active = rt.index.active();
  if (active.length === 0) return { adopted, lost };
  const runners = await findRunners();
  for (const record of active) {
    const status = record.status!;
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
