/**
 * Typed messages between the launcher (service) and the spawner process over its IPC channel,
 * and the file the spawner starts.
 */
import { fileURLToPath } from 'node:url';

/** The task runner, bundled by the build into one file (see bundle.mjs). */
export const RUNNER = fileURLToPath(new URL('./runner.cjs', import.meta.url));

/** Service → spawner: start one task runner. */
export interface SpawnRequest {
  type: 'spawn';
  runId: string;
  /** The Task directory: the runner's working directory. */
  cwd: string;
  /** `task.log`, opened for appending as the runner's stdout and stderr. */
  logFile: string;
  /** Variables added to the spawner's environment (the TASKYARD_TASK_* identity). */
  env: Record<string, string>;
}

/** Spawner → service: what became of a request, and later of the process. */
export type SpawnerEvent =
  | { type: 'spawned'; runId: string; pid: number }
  | { type: 'spawn-failed'; runId: string; message: string }
  | { type: 'exited'; runId: string; code: number | null; signal: NodeJS.Signals | null };
