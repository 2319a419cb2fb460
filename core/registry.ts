import { JobResponse, responseSchemaOf, type JobCatalog, type JobDescriptor } from '../schemas/job-response.js';
import { check } from '../schemas/validator.js';
import { DEFAULT_JOB_FLAGS, type CallerTag, type Job, type JobArgs, type JobContext, type JobFlags, type JobScope, type RegisteredJob, type Transport } from './job.js';
import { ConfigError, describeError, HttpError, OPEN_SERVICE_NOTE, unknownJob } from './errors.js';
import { taskIdOf, type AuditSink } from './audit.js';

// Declared with the JobContext, which refers to them through its caller's scope (core/job.ts).
export type { JobArgs, RegisteredJob, Transport } from './job.js';
/** How a call ended: a JobResponse with success true or false, or none at all. */
export type CallOutcome = 'success' | 'failure' | 'no_result';
/** Told when a Job starts running; the function it returns is told how the call ended. */
export type JobCallObserver = (job: string, transport: Transport) => (outcome: CallOutcome) => void;

/**
 * The one list of Jobs. Every transport asks it for the public catalog and for a Job by name,
 * and calls `invoke`, so validation and error mapping happen in exactly one place.
 * The catalog is fixed at construction: configuration changes need a restart (spec).
 */
export class JobRegistry implements JobScope {
  readonly #public = new Map<string, RegisteredJob>();
  #catalog: JobCatalog;
  /** Every Job declared, public or not (to check Job names in config). */
  readonly #declared: ReadonlySet<string>;
  /** Of a view made by restrictTo: the whole registry, which knows the Jobs this view refuses. */
  #whole: JobRegistry | undefined;
  /** Of an open service: the Jobs it hides because they need a token (a caller asking is told why). */
  readonly #needToken = new Set<string>();

  readonly #observe: JobCallObserver | undefined;
  readonly #audit: AuditSink | undefined;

  constructor(jobs: readonly Job[], overrides: Record<string, Partial<JobFlags>>, tokenConfigured: boolean, observe?: JobCallObserver, audit?: AuditSink) {
    this.#observe = observe;
    this.#audit = audit;
    const byName = new Map(jobs.map((j) => [j.name, j]));
    if (byName.size !== jobs.length) throw new Error('two Jobs share a name');
    for (const name of Object.keys(overrides)) {
      if (!byName.has(name)) throw new ConfigError(`jobs.${name}: no Job of that name (known: ${[...byName.keys()].sort().join(', ')})`);
    }
    this.#declared = new Set(byName.keys());
    for (const job of jobs) {
      const flags = Object.freeze({ ...DEFAULT_JOB_FLAGS, ...job.flags, ...overrides[job.name] });
      // Spec, Authentication 5: public when served, and either a token guards the service or
      // the Job explicitly needs no auth.
      if (!flags.enable_serve) continue;
      if (!tokenConfigured && flags.requires_auth) {
        this.#needToken.add(job.name);
        continue;
      }
      const descriptor: JobDescriptor = {
        name: job.name,
        description: job.description,
        input_schema: job.input,
        output_schema: JobResponse,
      };
      this.#public.set(job.name, Object.freeze({ job, flags, descriptor, response: responseSchemaOf(job.name, job.output) }));
    }
    this.#catalog = catalogOf(this.#public);
  }

  /** The public Jobs (GET /jobs): of a view, only those in its scope. */
  get catalog(): JobCatalog {
    return this.#catalog;
  }

  /** Whether a Job of that name is declared at all (public or not). */
  declares(name: string): boolean {
    return this.#declared.has(name);
  }

  /**
   * The same registry seen by a token whose scope is `names` (`*`: every Job): `get`, `list` and
   * `catalog` hold only those Jobs; `refuses` tells a public Job outside the scope from an unknown
   * one. Made once per token at start, so a call through a view costs what a call through the
   * whole registry costs.
   */
  restrictTo(names: readonly string[]): JobRegistry {
    if (names.includes('*')) return this;
    const view = new JobRegistry([], {}, false, this.#observe, this.#audit);
    for (const name of names) {
      const entry = this.#public.get(name);
      if (entry) view.#public.set(name, entry);
    }
    view.#catalog = catalogOf(view.#public);
    view.#whole = this;
    return view;
  }

  /** Whether `name` is a public Job this view's scope leaves out. */
  refuses(name: string): boolean {
    return this.#whole !== undefined && !this.#public.has(name) && this.#whole.#public.has(name);
  }

  /**
   * Records a call refused before it ran (a Job outside the caller's scope) and answers the 403
   * to throw. Nothing of the call runs.
   */
  refusal(name: string, caller: CallerTag): HttpError {
    this.#audit?.({ time: new Date().toISOString(), token: caller.token, transport: caller.transport, job: name, outcome: 'refused' });
    return new HttpError(403, `The token "${caller.token}" may not call ${name}: its scope does not include it`);
  }

  /** Whether this open service hides Jobs that need a token (its catalog then says why they are missing). */
  get hidesTokenJobs(): boolean {
    return this.#needToken.size > 0;
  }

  /**
   * The 404 `Unknown job` for `name`, with the closest public names (of Jobs that stream, for an
   * `/events` call) and, for a Job an open service hides or one that does not stream, why.
   */
  unknownJob(name: string, streaming = false): HttpError {
    const known: string[] = [];
    for (const entry of this.#public.values()) if (!streaming || entry.flags.enable_stream) known.push(entry.job.name);
    const reason = this.#needToken.has(name) ? OPEN_SERVICE_NOTE : streaming && this.#public.has(name) ? `${name} does not stream (enable_stream is false): call POST /jobs/${name}, without /events` : undefined;
    return unknownJob(name, known, reason);
  }

  /** The public Job of that name, or undefined (callers answer 404 `Unknown job`). */
  get(name: string): RegisteredJob | undefined {
    return this.#public.get(name);
  }

  list(): RegisteredJob[] {
    return [...this.#public.values()];
  }

  /**
   * Validates and fills defaults into `args` (which the caller owns: a freshly parsed body); a
   * violation is a 422 raised before anything runs.
   */
  prepare(entry: RegisteredJob, args: unknown): JobArgs {
    const parsed = check(entry.job.input, args ?? {}, { defaults: true, inPlace: true });
    if (!parsed.ok) throw new HttpError(422, parsed.issues.map((i) => ({ ...i, loc: ['body', 'arguments', ...i.loc] })));
    return parsed.value;
  }

  /**
   * Runs prepared arguments; anything thrown becomes a business failure. Never throws. Answers
   * null when the Job produced no JobResponse, so each transport can say so in its own words.
   */
  async execute(entry: RegisteredJob, args: JobArgs, ctx: JobContext, transport: Transport = 'http'): Promise<JobResponse | null> {
    const ended = this.#observe?.(entry.job.name, transport);
    const response = await this.#run(entry, args, ctx);
    ended?.(response === null ? 'no_result' : response.success ? 'success' : 'failure');
    const caller = ctx.caller;
    if (this.#audit && caller) {
      const taskId = taskIdOf(args, response?.answer);
      this.#audit({ time: new Date().toISOString(), token: caller.token, transport: caller.transport, job: entry.job.name, ...(taskId === undefined ? {} : { task_id: taskId }), outcome: response?.success ? 'ok' : 'business_failure' });
    }
    return response;
  }

  async #run(entry: RegisteredJob, args: JobArgs, ctx: JobContext): Promise<JobResponse | null> {
    let result: unknown;
    try {
      result = await entry.job.run(args, ctx);
    } catch (err) {
      return { answer: describeError(err), success: false, metadata: {} };
    }
    if (typeof result !== 'object' || result === null || typeof (result as JobResponse).success !== 'boolean') return null;
    const { answer, success, metadata } = result as JobResponse;
    return { answer: answer === undefined ? '' : answer, success, metadata: metadata ?? {} };
  }
}

function catalogOf(jobs: ReadonlyMap<string, RegisteredJob>): JobCatalog {
  const items = [...jobs.values()].map((r) => r.descriptor);
  return Object.freeze({ items, total: items.length });
}
