import type { SlurmRestSection } from '../../../schemas/config.js';
import type { JobState } from './slurm-commands.js';
import { setTimeout as delay } from 'node:timers/promises';
import { errorsOf, INVALID_JOB_ID, NOT_SENT_ERRORS, type RestError, type SlurmRestApi } from './slurm-rest-api.js';
import { chooseApi } from './slurm-rest-versions.js';
import { RestNoAnswer, SlurmRestClient, type RestAnswer } from './slurm-rest-client.js';
import { Bounded, SubmitUncertain, type SlurmTransport, type SubmitJob, type TransportConfig } from './slurm-transport.js';

/** How long a submit may wait for its answer when `executor.sbatch_timeout_s` does not say. */
const SUBMIT_TIMEOUT_S = 20;
/** How long a state read or a cancel may wait. */
const READ_TIMEOUT_MS = 20_000;
/** Requests at once: the pool's connections, each kept alive. */
const AT_ONCE = 8;
/** The first pause before a submit that reached no controller is sent again (it doubles up to MAX_RETRY_MS). */
const RETRY_MS = 200;
const MAX_RETRY_MS = 2_000;
/** Slurm's "already completing or completed": a cancel that has nothing left to do. */
const ALREADY_DONE = 2021;

/**
 * Submit, watch and cancel through slurmrestd. The watch reads each of the service's own jobs
 * (`GET job/{id}`), so its cost follows the service's jobs, never the cluster's others; only a
 * lookup by name (after a submit whose answer was lost) lists all jobs.
 */
export class SlurmRestTransport implements SlurmTransport {
  readonly kind = 'rest';
  readonly #client: SlurmRestClient;
  readonly #config: TransportConfig;
  readonly #requests = new Bounded(AT_ONCE);
  #api: Promise<SlurmRestApi> | null = null;

  constructor(rest: SlurmRestSection, config: TransportConfig) {
    this.#client = new SlurmRestClient(rest);
    this.#config = config;
  }

  /**
   * The API version both speak, asked once (GET /openapi/v3); an unsupported server stays refused
   * with the reason, one that did not answer is asked again at the next call.
   */
  api(): Promise<SlurmRestApi> {
    this.#api ??= this.#client.request('GET', '/openapi/v3', READ_TIMEOUT_MS).then(
      (answer) => {
        const api = chooseApi(answer.body);
        if (api instanceof Error) throw new Error(`${this.#client.where} ${api.message}`);
        return api;
      },
      (err: unknown) => {
        this.#api = null;
        throw err;
      },
    );
    return this.#api;
  }

  /**
   * POSTs the job. While slurmrestd or the controller is certainly not reached, nothing was
   * queued: the submit is sent again, as sbatch retries, until `executor.sbatch_timeout_s` passed.
   */
  async submit(job: SubmitJob): Promise<string> {
    const timeoutMs = (this.#config.sbatch_timeout_s ?? SUBMIT_TIMEOUT_S) * 1000;
    const deadline = Date.now() + timeoutMs;
    for (let tries = 0; ; tries++) {
      const outcome = await this.#submitOnce(job, deadline);
      if (typeof outcome === 'string') return outcome;
      if (Date.now() >= deadline) throw new Error(`no Slurm controller took the job within ${timeoutMs / 1000} s: ${outcome.notSent}`);
      await delay(Math.min(RETRY_MS * 2 ** tries, MAX_RETRY_MS));
    }
  }

  /**
   * One try: the job id; `notSent` (why) where the request certainly reached no controller; rejects
   * with SubmitUncertain where the job may be queued, or with Slurm's refusal.
   */
  async #submitOnce(job: SubmitJob, deadline: number): Promise<string | { notSent: string }> {
    let api: SlurmRestApi;
    try {
      api = await this.api();
    } catch (err) {
      // The version check (a GET) submits nothing, whatever became of it.
      if (err instanceof RestNoAnswer) return { notSent: err.message };
      throw err;
    }
    let answer: RestAnswer;
    try {
      answer = await this.#requests.run(() => this.#client.request('POST', api.submitPath, Math.max(deadline - Date.now(), 1000), api.submitBody(job, this.#config)));
    } catch (err) {
      if (!(err instanceof RestNoAnswer)) throw err;
      if (err.sent) throw new SubmitUncertain(err.message);
      return { notSent: err.message };
    }
    const jobId = api.jobIdOf(answer.body);
    // A job id means the job is queued, even beside an error: a controller just restarted queues
    // jobs with "Required node not available" (the pending reason), as sbatch does.
    if (jobId) return jobId;
    const errors = errorsOf(answer.body);
    const said = `${this.#client.where} answered a submit with ${describe(answer, errors)}`;
    if (errors.length > 0 && errors.every((e) => NOT_SENT_ERRORS.has(e.number))) return { notSent: said };
    // A lost or garbled answer from the controller may follow a job it queued all the same.
    if (errors.length === 0 || errors.some(isCommunication)) throw new SubmitUncertain(said);
    throw new Error(`${this.#client.where} refused the job: ${describe(answer, errors)}`);
  }

  async states(jobIds: readonly string[]): Promise<Map<string, JobState>> {
    const api = await this.api();
    const shown = await Promise.all(jobIds.map((id) => this.#requests.run(() => this.#job(api, id))));
    const states = new Map<string, JobState>();
    jobIds.forEach((id, i) => {
      const state = shown[i];
      if (state) states.set(id, state);
    });
    return states;
  }

  async show(jobId: string): Promise<JobState | 'unknown' | null> {
    try {
      return (await this.#job(await this.api(), jobId)) ?? 'unknown';
    } catch {
      return null;
    }
  }

  /** One job's state; undefined when the controller has no such job; rejects when it did not answer. */
  async #job(api: SlurmRestApi, jobId: string): Promise<JobState | undefined> {
    const answer = await this.#client.request('GET', api.jobPath(jobId), READ_TIMEOUT_MS);
    const errors = errorsOf(answer.body);
    if (errors.some((e) => e.number === INVALID_JOB_ID)) return undefined;
    const job = api.jobsOf(answer.body).find((shown) => shown.id === jobId);
    if (errors.length > 0 || !job) throw new Error(`reading Slurm job ${jobId}: ${describe(answer, errors)}`);
    return { state: job.state, reason: job.reason };
  }

  async named(jobName: string): Promise<Map<string, JobState>> {
    const api = await this.api();
    const answer = await this.#client.request('GET', api.jobsPath, READ_TIMEOUT_MS);
    const errors = errorsOf(answer.body);
    if (answer.status !== 200 || errors.length > 0) throw new Error(`listing Slurm jobs: ${describe(answer, errors)}`);
    const named = new Map<string, JobState>();
    for (const job of api.jobsOf(answer.body)) {
      if (job.name === jobName && job.user === this.#client.user) named.set(job.id, { state: job.state, reason: job.reason });
    }
    return named;
  }

  async cancel(jobIds: readonly string[]): Promise<void> {
    const api = await this.api();
    const refused = await Promise.all(
      jobIds.map((id) =>
        this.#requests.run(async () => {
          const answer = await this.#client.request('DELETE', api.jobPath(id), READ_TIMEOUT_MS);
          const errors = errorsOf(answer.body).filter((e) => e.number !== ALREADY_DONE && e.number !== INVALID_JOB_ID);
          return errors.length > 0 ? `job ${id}: ${describe(answer, errors)}` : null;
        }),
      ),
    );
    const said = refused.filter((line) => line !== null);
    if (said.length > 0) throw new Error(`${this.#client.where} did not cancel ${said.join('; ')}`);
  }

  close(): void {
    this.#client.close();
  }
}

/**
 * Slurm's communication errors (1000-1999: connection, send, receive; 5000-5999: socket timeouts):
 * the controller may have acted on a request whose answer they replaced.
 */
function isCommunication(error: RestError): boolean {
  return (error.number >= 1000 && error.number < 2000) || (error.number >= 5000 && error.number < 6000) || error.number === -1;
}

function describe(answer: RestAnswer, errors: readonly RestError[]): string {
  return errors.length > 0 ? errors.map((e) => e.text).join('; ') : `HTTP ${answer.status} without a job id`;
}
