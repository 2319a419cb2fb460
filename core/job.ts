import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { JobDescriptor, JobResponse, JobResult } from '../schemas/job-response.js';
import type { JobEvent } from '../schemas/events.js';
import type { JobOverride } from '../schemas/config.js';

/** Exposure flags of a Job; config `jobs.<name>` (its JobOverride) may override each one. */
export type JobFlags = Required<JobOverride>;

export const DEFAULT_JOB_FLAGS: Readonly<JobFlags> = Object.freeze({
  enable_serve: true,
  requires_auth: true,
  enable_stream: true,
});

/**
 * Hints about a Job's effects for clients that choose what to call unattended (MCP tool
 * annotations). Leaving one out means "unknown", never "false".
 */
export interface JobAnnotations {
  /** Changes nothing: queries. */
  readOnlyHint?: boolean;
  /** May destroy or overwrite something (shell, cancel, deletes). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint?: boolean;
  /** Reaches beyond this service (other machines, the network). */
  openWorldHint?: boolean;
}

/** Annotations of a Job that only reads. */
export const READ_ONLY: Readonly<JobAnnotations> = Object.freeze({ readOnlyHint: true, idempotentHint: true, destructiveHint: false });

/** What a running Job may use besides its arguments. */
export interface JobContext {
  /** Aborted when the caller goes away (SSE disconnect, HTTP abort) or the service stops. */
  readonly signal: AbortSignal;
  /** True when the caller reads events (`/events`); Jobs may skip work whose only output is events. */
  readonly streaming: boolean;
  /** Streams an event to an SSE caller (resolves when the socket took it: await it for backpressure); a no-op for JSON and MCP calls. */
  emit(event: JobEvent): Promise<void>;
  /** Who called, when a client did (absent for the service's own calls): audited, and kept as a Task's submitter. */
  readonly caller?: CallerTag | undefined;
}

/**
 * A Job declared once: the registry derives the catalog entry, the JSON and SSE routes, the MCP
 * tool (its outputSchema from `output`) and the CLI command from it.
 */
export interface Job<S extends TObject = TObject, O extends TSchema = TSchema> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  /** Schema of the JobResponse's `answer` (a business failure may answer error text instead). */
  readonly output: O;
  readonly flags?: Partial<JobFlags>;
  /** Effects a client may rely on (published as MCP tool annotations). */
  readonly annotations?: Readonly<JobAnnotations>;
  /** Returns the JobResponse; throwing a BusinessError (or any Error) becomes `success: false`. */
  run(args: Static<S>, ctx: JobContext): Promise<JobResult<Static<O>>>;
}

/** Identity helper that lets TypeScript infer `args` from the input schema and the answer from the output schema. */
export function defineJob<S extends TObject, O extends TSchema>(job: Job<S, O>): Job<S, O> {
  return job;
}

/**
 * Where a Job call came in, as the audit log names it (`console`: the web console's HTTP calls;
 * `agent`: a tool call of an Agent turn, on behalf of the token that started the turn).
 */
export type AuditTransport = 'http' | 'sse' | 'mcp' | 'console' | 'agent';

/**
 * Who makes a call: the name of the bearer token it came with (`service` for `service.token`,
 * `anonymous` on an open service) and the door it used. Made once per token and door, never per
 * call (core/caller.ts); the token's value is never part of it, so nothing that logs or answers a
 * caller can leak it.
 */
export interface CallerTag {
  readonly token: string;
  readonly transport: AuditTransport;
  /** The Jobs the token may call (the registry, or its view for a scoped token): what work done on its behalf may call. */
  readonly scope: JobScope;
}

/** Which entry point called a Job (`agent`: a tool call of an Agent turn). */
export type Transport = 'http' | 'sse' | 'mcp' | 'agent';

/** Arguments of a Job, checked against its input schema by `prepare`. */
export type JobArgs = Static<TObject>;

/** A Job together with its effective flags after config overrides. */
export interface RegisteredJob {
  readonly job: Job;
  readonly flags: Readonly<JobFlags>;
  /** The catalog entry: its output_schema is the spec's shared JobResponse. */
  readonly descriptor: JobDescriptor;
  /** The JobResponse with this Job's typed answer (MCP outputSchema, OpenAPI). */
  readonly response: TObject;
}

/**
 * The Jobs a caller may call and the one way to call them: what the JobRegistry (core/registry.ts)
 * and each of its views offer. Declared here, beside the context that carries it in its caller,
 * because the two refer to each other: the registry runs Jobs with a JobContext, whose caller
 * carries a scope.
 */
export interface JobScope {
  /** The public Job of that name, or undefined (callers answer 404 `Unknown job`). */
  get(name: string): RegisteredJob | undefined;
  list(): RegisteredJob[];
  /** Checks `args` against the Job's input schema and fills defaults (a 422 HttpError when they do not fit). */
  prepare(entry: RegisteredJob, args: unknown): JobArgs;
  /** Runs prepared arguments; never throws; null when the Job produced no JobResponse. */
  execute(entry: RegisteredJob, args: JobArgs, ctx: JobContext, transport?: Transport): Promise<JobResponse | null>;
}

/** The `emit` of callers that read no events (JSON, MCP). */
const NO_EVENTS: JobContext['emit'] = () => Promise.resolve();

/**
 * A JobContext whose signal is combined from `sources` only when a Job first reads it:
 * `AbortSignal.any` costs more than a whole small request, and most Jobs never look. A class, so
 * the getter lives on the prototype (an object literal with a getter is slow to create, and this
 * runs for every call). Exported for contexts that carry a capability of their own (shared-events.ts).
 */
export class LazyJobContext implements JobContext {
  #signal: AbortSignal | undefined;

  constructor(
    private readonly sources: () => AbortSignal[],
    readonly streaming: boolean,
    readonly emit: JobContext['emit'],
    readonly caller: CallerTag | undefined,
  ) {}

  get signal(): AbortSignal {
    return (this.#signal ??= AbortSignal.any(this.sources()));
  }
}

export function createJobContext(
  sources: () => AbortSignal[],
  streaming: boolean,
  emit: JobContext['emit'] = NO_EVENTS,
  caller?: CallerTag,
): JobContext {
  return new LazyJobContext(sources, streaming, emit, caller);
}
