import { setTimeout as delay } from 'node:timers/promises';
import type { RunnerEnd } from './executor.js';
import { endOfJob, requeuedEnd, type JobState } from './slurm-commands.js';
import type { SlurmTransport } from './slurm-transport.js';
import { ADOPT_WAIT_MS, type WatchedJob } from './slurm-watched-job.js';

/** How often the jobs of live runs are looked up (one squeue for all of them). */
export const POLL_MS = 500;
/** The longest pause between polls while the controller does not answer (the pause doubles from POLL_MS). */
const MAX_BACKOFF_MS = 10_000;

/**
 * Follows every watched job with one loop: one read of their states per round (the transport's:
 * squeue, or slurmrestd), ended jobs resolved
 * and dropped. A job missing from squeue ends only on evidence (WatchedJob); one the service gives
 * up on (gone on evidence, requeued by Slurm after it ran, or adopted and the controller silent
 * past ADOPT_WAIT_MS) is scancelled,
 * so it cannot go on writing into a Task directory the service already settled. While the
 * controller does not answer, the pause between rounds doubles up to MAX_BACKOFF_MS.
 */
export class SlurmJobPoller {
  readonly #slurm: SlurmTransport;
  readonly #adoptWaitMs: number;
  readonly #watched = new Map<string, WatchedJob>();
  #polling = false;
  /** Aborted by close(): ends the pause between rounds at once (a backoff may be 10 s long). */
  readonly #closed = new AbortController();
  /** squeue failures in a row (0 while the controller answers). */
  #failures = 0;

  /** `adoptWaitMs`: ADOPT_WAIT_MS, shorter only where a test must see it pass. */
  constructor(slurm: SlurmTransport, adoptWaitMs = ADOPT_WAIT_MS) {
    this.#slurm = slurm;
    this.#adoptWaitMs = adoptWaitMs;
  }

  has(jobId: string): boolean {
    return this.#watched.has(jobId);
  }

  watch(job: WatchedJob): void {
    this.#watched.set(job.jobId, job);
    void this.#poll();
  }

  /** Stops: every watched job's run ends here as "lost" (the service is stopping; the jobs run on). */
  close(): void {
    this.#closed.abort();
    for (const job of this.#watched.values()) job.end({ kind: 'lost', pid: null });
    this.#watched.clear();
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const { signal } = this.#closed;
      while (this.#watched.size > 0 && !signal.aborted) {
        // Nothing in a round should throw; if something does, the jobs stay watched and the next round tries again.
        await this.#round().catch((err: unknown) => console.error('taskyard: following Slurm jobs failed in the service', err));
        if (this.#watched.size > 0) await delay(Math.min(POLL_MS * 2 ** this.#failures, MAX_BACKOFF_MS), undefined, { signal }).catch(() => undefined);
      }
    } finally {
      this.#polling = false;
    }
  }

  async #round(): Promise<void> {
    const states = await this.#states();
    // Stopped meanwhile: the runs ended as "lost" and their jobs run on for the next service.
    if (this.#closed.signal.aborted) return;
    const now = Date.now();
    const jobs = [...this.#watched.values()];
    if (!states) {
      const expired = jobs.filter((job) => job.adoptionExpired(now, this.#adoptWaitMs));
      const reason = (job: WatchedJob) => `worker lost: the Slurm controller did not answer within ${minutes(this.#adoptWaitMs)} of this service adopting job ${job.jobId}`;
      return this.#giveUp(expired.map((job) => [job, { kind: 'engine-ended', reason: reason(job) }]));
    }
    const gone: Array<[WatchedJob, RunnerEnd]> = [];
    for (const job of jobs) {
      job.adoptedAt = null;
      const shown = states.get(job.jobId);
      if (shown) job.seen();
      if (shown && job.requeued(shown)) {
        gone.push([job, requeuedEnd(job.jobId)]);
        continue;
      }
      const end = shown ? endOfJob(job.jobId, shown, job.cancelled) : await this.#judgeMissing(job, now);
      if (end === 'gone') gone.push([job, endOfJob(job.jobId, undefined, job.cancelled)!]);
      else if (end) this.#finish(job, end);
    }
    await this.#giveUp(gone);
  }

  /**
   * A job an answering squeue did not list: ended when its runner wrote the run's terminal record,
   * 'gone' when it was missing long enough and scontrol has no such job either, else not yet known.
   */
  async #judgeMissing(job: WatchedJob, now: number): Promise<RunnerEnd | 'gone' | null> {
    if (await job.recordedEnd()) return { kind: 'exited', code: 0, signal: null };
    if (!job.missed(now)) return null;
    const shown = await this.#slurm.show(job.jobId);
    if (shown === 'unknown') return 'gone';
    // scontrol knows it (squeue lied): that is its state; or scontrol did not answer: ask again later.
    if (shown) job.seen();
    return shown ? endOfJob(job.jobId, shown, job.cancelled) : null;
  }

  /** Ends runs the service settles without Slurm's word, after one scancel of all their jobs in case they still run. */
  async #giveUp(ends: ReadonlyArray<[WatchedJob, RunnerEnd]>): Promise<void> {
    if (ends.length === 0) return;
    const ids = ends.map(([job]) => job.jobId);
    await this.#slurm.cancel(ids).catch((err: unknown) => console.error(`taskyard: cancelling Slurm jobs ${ids.join(' ')} of settled runs failed (${(err as Error).message})`));
    for (const [job, end] of ends) this.#finish(job, end);
  }

  #finish(job: WatchedJob, end: RunnerEnd): void {
    this.#watched.delete(job.jobId);
    job.end(end);
  }

  /** The watched jobs' states; null while the controller does not answer (the runs stay as they are). */
  async #states(): Promise<Map<string, JobState> | null> {
    try {
      const states = await this.#slurm.states([...this.#watched.keys()]);
      if (this.#failures > 0) console.error('taskyard: the Slurm controller answers again');
      this.#failures = 0;
      return states;
    } catch (err) {
      // Stopped meanwhile (the transport's connections closed under the read): nothing to say.
      if (this.#closed.signal.aborted) return null;
      if (this.#failures++ === 0) console.error(`taskyard: ${this.#waitingFor()} (reading Slurm job states failed: ${(err as Error).message}); asking again every ${MAX_BACKOFF_MS / 1000} s at most`);
      return null;
    }
  }

  /** The one line logged when the controller stops answering: what waits for it. */
  #waitingFor(): string {
    const adopting = [...this.#watched.values()].filter((job) => job.adoptedAt !== null).length;
    if (adopting === 0) return `${this.#watched.size} Slurm jobs stay as they are until the controller answers`;
    return `waiting for the Slurm controller to adopt ${adopting} runs; they are settled as lost if it does not answer within ${minutes(this.#adoptWaitMs)}`;
  }
}

/** A bound as a person reads it in a log line or an error. */
function minutes(ms: number): string {
  return ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
