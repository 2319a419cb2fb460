import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../workers/task-runner/record-files.js';
import { STATE_DIR } from '../token-store.js';

/**
 * Which process runs which Task, kept in `<workspace>/.taskyard/workers/<run_id>.json` so a
 * restarted service can tell its predecessor's live workers (same pid and start time) from dead
 * ones. Private to the service: not part of the Task directory the user sees.
 */
export interface WorkerFile {
  task_id: string;
  run_id: string;
  pid: number;
  start_ticks: number;
}

const workersDir = (workspace: string) => join(workspace, STATE_DIR, 'workers');
const fileOf = (workspace: string, runId: string) => join(workersDir(workspace), `${runId}.json`);

export async function writeWorkerFile(workspace: string, worker: WorkerFile): Promise<void> {
  await mkdir(workersDir(workspace), { recursive: true, mode: 0o700 });
  await writeJsonAtomic(fileOf(workspace, worker.run_id), worker);
}

export async function removeWorkerFile(workspace: string, runId: string): Promise<void> {
  await rm(fileOf(workspace, runId), { force: true });
}

/** Every worker file, keyed by run_id; unreadable ones are skipped. */
export async function readWorkerFiles(workspace: string): Promise<Map<string, WorkerFile>> {
  const out = new Map<string, WorkerFile>();
  const names = await readdir(workersDir(workspace)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const worker = JSON.parse(await readFile(join(workersDir(workspace), name), 'utf8')) as WorkerFile;
      if (typeof worker.pid === 'number' && typeof worker.run_id === 'string') out.set(worker.run_id, worker);
    } catch {
      // A torn or foreign file tells nothing: the record it belonged to is judged without it.
    }
  }
  return out;
}
