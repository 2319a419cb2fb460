import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonObject } from '../../common/json-file.js';
import { isTerminal, TASK_FILES } from '../../../core/task-record/record-files.js';
import { TaskState } from '../../../schemas/tasks.js';
import type { Runner, RunnerEnd } from './executor.js';
import { isRequeued, type JobState } from './slurm-commands.js';

/**
 * When the Slurm executor may believe that a job is gone. One squeue that exits 0 without a job
 * proves nothing (a busy or restarting controller answers empty or garbled lines), so a job missing
 * from squeue is gone only once it was missing from ABSENT_ROUNDS answers in a row spanning
 * ABSENT_GRACE_MS, and `scontrol show job` then says the controller has no such job. The run's own
 * terminal record on disk is evidence at once. Runs adopted after a restart wait for a controller
 * that does not answer, up to ADOPT_WAIT_MS.
 */

/** squeue answers in a row that must miss a job before scontrol is asked about it. */
export const ABSENT_ROUNDS = 3;
/** How long those answers must span. */
export const ABSENT_GRACE_MS = 5_000;
/** How long adopted runs wait for a controller that does not answer before they are settled as lost. */
export const ADOPT_WAIT_MS = 10 * 60_000;

const STATES = new Set<string>(Object.values(TaskState));

/** One job the executor follows for one run, and what has been seen of it: the run's runner on Slurm, carrying its end. */
export class WatchedJob implements Runner {
  /** It runs on a cluster node: no local process. */
  readonly pid = null;
  readonly jobId: string;
  /** The run's Task directory and run id: where its own record is. */
  readonly dir: string;
  readonly runId: string;
  /** This service asked scancel: a CANCELLED job is its doing. */
  cancelled = false;
  /** When it was adopted, until the controller first answers; the adoption bound runs from here. */
  adoptedAt: number | null;
  /** How the run's job ended, as the executor's runner answers it. */
  readonly ended: Promise<RunnerEnd>;
  /** Settles `ended` (once: later calls do nothing). */
  readonly end: (end: RunnerEnd) => void;
  /** Slurm was seen running it: a later pending state is a requeue. */
  #ran = false;
  #missedSince: number | null = null;
  #missedRounds = 0;

  /** `adoptedAt`: now, for a run a previous service left; null for one this service submitted. */
  constructor(jobId: string, dir: string, runId: string, adoptedAt: number | null) {
    this.jobId = jobId;
    this.dir = dir;
    this.runId = runId;
    this.adoptedAt = adoptedAt;
    let end!: (end: RunnerEnd) => void;
    this.ended = new Promise<RunnerEnd>((resolve) => (end = resolve));
    this.end = end;
  }

  /** The controller showed the job: whatever was missed before was noise. */
  seen(): void {
    this.#missedSince = null;
    this.#missedRounds = 0;
  }

  /** Slurm shows the job in `state`: true when it ran before and is queued again (requeued). */
  requeued(shown: JobState): boolean {
    if (shown.state === 'RUNNING') this.#ran = true;
    return this.#ran && isRequeued(shown);
  }

  /**
   * For a job adopted after a restart: its run's log has a line once the batch script ran (the
   * first names the node), and Slurm creates it only then; so a job with a log that is pending
   * again was requeued while no service watched it.
   */
  async noteStartedBefore(): Promise<void> {
    const log = await lstat(join(this.dir, TASK_FILES.log)).catch(() => null);
    if (log?.isFile() && log.size > 0) this.#ran = true;
  }

  /** An answering squeue did not list the job: true once it was missing long enough to ask scontrol. */
  missed(now: number): boolean {
    this.#missedSince ??= now;
    this.#missedRounds++;
    return this.#missedRounds >= ABSENT_ROUNDS && now - this.#missedSince >= ABSENT_GRACE_MS;
  }

  /** Adopted, and the controller has not answered for `bound` ms (ADOPT_WAIT_MS) since. */
  adoptionExpired(now: number, bound = ADOPT_WAIT_MS): boolean {
    return this.adoptedAt !== null && now - this.adoptedAt >= bound;
  }

  /** Whether the runner wrote this run's terminal record (read without following links). */
  async recordedEnd(): Promise<boolean> {
    const status = await readJsonObject(join(this.dir, TASK_FILES.status));
    const state = status?.['state'];
    return status?.['run_id'] === this.runId && typeof state === 'string' && STATES.has(state) && isTerminal(state as TaskState);
  }
}
