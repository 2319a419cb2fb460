import { finalizeRun } from './finalize.js';
import { isAlive } from './proc-info.js';
import type { TaskRuntime } from './task-runtime.js';
import { readWorkerFiles, removeWorkerFile } from './worker-files.js';

/**
 * Restart: every record a previous service left queued or running is either adopted again (its
 * worker still runs: same pid and process start time) or marked failed with "worker lost". Worker
 * files of settled runs are removed. Nothing stays `running` without a worker.
 */
export async function adoptOrphans(rt: TaskRuntime): Promise<{ adopted: string[]; lost: string[] }> {
  const workers = await readWorkerFiles(rt.workspace);
  const adopted: string[] = [];
  const lost: string[] = [];
  for (const record of rt.index.active()) {
    const status = record.status!;
    const worker = workers.get(status.run_id);
    workers.delete(status.run_id);
    const target = { id: record.id, parts: record.parts, dir: record.dir, runId: status.run_id };
    if (worker && worker.task_id === record.id && isAlive(worker.pid, worker.start_ticks)) {
      void rt.launcher.adopt({ ...target, registration: record.parts.registration, module: '' }, worker.pid, worker.start_ticks);
      rt.watch(record);
      adopted.push(record.id);
    } else {
      await finalizeRun(rt.index, target, { kind: 'lost', pid: worker?.pid ?? status.pid }, false);
      if (worker) await removeWorkerFile(rt.workspace, worker.run_id);
      lost.push(record.id);
    }
  }
  for (const stale of workers.values()) await removeWorkerFile(rt.workspace, stale.run_id);
  return { adopted, lost };
}
