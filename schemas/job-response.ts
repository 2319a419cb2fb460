import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

const ANSWER = 'Business answer, or error text on failure';

/** The one response type shared by HTTP JSON, SSE `result` events and MCP tools. */
export const JobResponse = Type.Object(
  {
    answer: Type.Unknown({ description: ANSWER, default: '' }),
    success: Type.Boolean({ description: 'Final business outcome', default: true }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Extra information', default: {} }),
  },
  { title: 'JobResponse' },
);
export type JobResponse = Static<typeof JobResponse>;

/** Answer of `GET /health`. */
export const Health = Type.Object({ running: Type.Boolean() });
export type Health = Static<typeof Health>;

/** Request envelope of `POST /jobs/{name}` and `/events`. */
export const RequestEnvelope = Type.Object(
  {
    arguments: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    target: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);
export type RequestEnvelope = Static<typeof RequestEnvelope>;

export const JobDescriptor = Type.Object({
  name: Type.String(),
  description: Type.String(),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
  output_schema: Type.Record(Type.String(), Type.Unknown()),
});
export type JobDescriptor = Static<typeof JobDescriptor>;

export const JobCatalog = Type.Object({ items: Type.Array(JobDescriptor), total: Type.Integer() });
export type JobCatalog = Static<typeof JobCatalog>;

/** A JobResponse whose answer is known to be an `A`. */
export type JobResponseOf<A> = Omit<JobResponse, 'answer'> & { answer: A };

/** What a Job's `run` answers: a JobResponse whose answer is `A`, whole or already serialized. */
export type JobResult<A> = JobResponseOf<A | SerializedAnswer<A> | StreamedAnswer<A>>;

/** Text of a business failure's answer: `<ExceptionType>: <message>`. */
const ErrorText = Type.String({ description: 'On failure: "<ExceptionType>: <message>"' });

/**
 * The JobResponse of one Job, its `answer` narrowed to the Job's answer schema (or the error text
 * of a business failure): the MCP tool's outputSchema and the Job's OpenAPI response.
 */
export function responseSchemaOf(name: string, answer: TSchema): TObject {
  return Type.Object(
    { ...JobResponse.properties, answer: Type.Union([answer, ErrorText], { description: ANSWER }) },
    { title: `JobResponse of ${name}` },
  );
}

export function ok<A>(answer: A, metadata: Record<string, unknown> = {}): JobResponseOf<A> {
  return { answer, success: true, metadata };
}

export function failed<A>(answer: A, metadata: Record<string, unknown> = {}): JobResponseOf<A> {
  return { answer, success: false, metadata };
}

const UNPARSED = Symbol('unparsed');

/**
 * An answer whose JSON text is already known. Transports write `json` as it is instead of
 * serialising `value` again; anything else that serialises it (MCP) gets `value` through
 * `toJSON`. Large answers served from memory (10,000 Task statuses) use it.
 */
export class SerializedAnswer<T = unknown> {
  #value: T | typeof UNPARSED;

  constructor(
    value: T,
    readonly json: string,
  ) {
    this.#value = value;
  }

  /**
   * An answer known only as text (a stored status, a page of statuses): HTTP writes the text and
   * never needs the value, so it is parsed only when asked for.
   */
  static ofJson<T>(json: string): SerializedAnswer<T> {
    const answer = new SerializedAnswer<T>(undefined as T, json);
    answer.#value = UNPARSED;
    return answer;
  }

  get value(): T {
    if (this.#value === UNPARSED) this.#value = JSON.parse(this.json) as T;
    return this.#value;
  }

  toJSON(): T {
    return this.value;
  }
}

/**
 * An answer too large to hold as one string (every Task status of a long history): its JSON text
 * is produced as chunks (text, or UTF-8 bytes that each hold whole characters) while it is
 * written, so neither the whole text nor the whole value needs to exist at once. Each call of
 * `chunks()` starts a fresh pass. Transports that need the value itself (MCP) build it with
 * `materialize()`.
 */
export class StreamedAnswer<T = unknown> {
  constructor(readonly chunks: () => AsyncIterable<string | Uint8Array>) {}

  /** The whole value, parsed from the chunks (for transports that cannot stream). */
  async materialize(): Promise<T> {
    const parts: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of this.chunks()) parts.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    parts.push(decoder.decode());
    return JSON.parse(parts.join('')) as T;
  }

  toJSON(): never {
    throw new TypeError('a StreamedAnswer is written with responseChunks() or materialize(), not JSON.stringify');
  }
}

/** The JSON text of a JobResponse after its answer: success and metadata, and the closing brace. */
export function tailJson(response: JobResponse): string {
  return `,"success":${response.success},"metadata":${JSON.stringify(response.metadata)}}`;
}

/** The JSON text of a JobResponse, reusing a SerializedAnswer's text. */
export function responseJson(response: JobResponse, prefix = '{'): string {
  const { answer } = response;
  const answerJson = answer instanceof SerializedAnswer ? answer.json : JSON.stringify(answer === undefined ? '' : answer);
  return `${prefix}"answer":${answerJson}${tailJson(response)}`;
}

/** The JSON text of a JobResponse as chunks: a StreamedAnswer's chunks between head and tail, else one piece. */
export async function* responseChunks(response: JobResponse, prefix = '{'): AsyncGenerator<string | Uint8Array> {
  if (!(response.answer instanceof StreamedAnswer)) {
    yield responseJson(response, prefix);
    return;
  }
  yield `${prefix}"answer":`;
  yield* response.answer.chunks();
  yield tailJson(response);
}

/** The plain value of an answer (for transports that need the object itself, such as MCP). */
export async function plainAnswer(response: JobResponse): Promise<JobResponse> {
  const { answer } = response;
  if (answer instanceof SerializedAnswer) return { ...response, answer: answer.value };
  if (answer instanceof StreamedAnswer) return { ...response, answer: await answer.materialize() };
  return response;
}
