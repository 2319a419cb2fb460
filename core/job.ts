import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { JobResult } from '../schemas/job-response.js';
import type { JobEvent } from '../schemas/events.js';
import type { JobOverride } from '../schemas/config.js';
import type { CallerTag } from './caller.js';

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
