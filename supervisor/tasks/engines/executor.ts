import type { StartSpec } from '../../../runner/spawner-messages.js';
import type { RetryCause } from '../../../schemas/tasks.js';

/**
 * The engine seam. An engine only starts a run, stops it, and reports whether it is alive and how
 * it ended; the service keeps the records, logs, progress and artifacts (TaskRun owns all that).
 * `local` starts runners on this machine, `slurm` hands each run to a Slurm cluster as a batch job.
 */

/** How a runner ended, as far as the service can tell. */
export type RunnerEnd =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'lost'; pid: number | null }
  | { kind: 'spawn-failed'; message: string }
  /**
   * The engine ended the run itself (a Slurm TIMEOUT, NODE_FAIL, an outside scancel): `reason`
   * says how; `cause`, where it is the machine's failure a retry policy names.
   */
  | { kind: 'engine-ended'; reason: string; cause?: RetryCause }
  /** The service stopped it after the definition's `time_limit_s`. */
  | { kind: 'time-limit'; seconds: number };

/** A started runner (a child process here, a batch job on Slurm): its end as one awaited value. */
export interface Runner {
  /** The local process id, or null where the engine runs it elsewhere (a Slurm job). */
  readonly pid: number | null;
  readonly ended: Promise<RunnerEnd>;
  /**
   * When the runner said it wrote its `running` record (its started_at), where the engine hears
   * that as it starts (a pooled local runner): the service shows `running` from it at once.
   */
  readonly startedAt?: string | null;
}

/** What an engine needs to start one run: the same shape the spawner and a pooled runner receive. */
export type { StartSpec };

/** A run a previous service left, to look for among the engine's live runners. */
export interface LeftRun {
  readonly runId: string;
  readonly dir: string;
}

export interface Executor {
  readonly kind: 'local' | 'slurm';
  /** True where the engine queues runs itself (Slurm): the service admits every run at once. */
  readonly queuesRuns: boolean;
  /** Starts a runner; rejects (with the reason) when none could be started. */
  start(spec: StartSpec): Promise<Runner>;
  /** The live runners among runs a previous service process left, by run_id. */
  adopt(runs: readonly LeftRun[]): Promise<Map<string, Runner>>;
  /** Ends the runner (SIGTERM, then SIGKILL after a grace); resolves once nothing of it is left. */
  stop(runner: Runner): Promise<void>;
  /**
   * Ends what is left of a run whose runner this service no longer has (found dead at a start):
   * processes that still carry its run_id. Where the engine keeps nothing of a dead run, absent.
   */
  endLeftovers?(runId: string): Promise<void>;
  /** Stops watching; runners keep running (a restarted service adopts them). */
  close(): void;
}
