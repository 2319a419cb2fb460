import { Type, type Static } from '@sinclair/typebox';

/** The one response type shared by HTTP JSON, SSE `result` events and MCP tools. */
export const JobResponse = Type.Object(
  {
    answer: Type.Unknown({ description: 'Business answer, or error text on failure', default: '' }),
    success: Type.Boolean({ description: 'Final business outcome', default: true }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Extra information', default: {} }),
  },
  { title: 'JobResponse' },
);
export type JobResponse = Static<typeof JobResponse>;

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

export function ok(answer: unknown, metadata: Record<string, unknown> = {}): JobResponse {
  return { answer, success: true, metadata };
}

export function failed(answer: unknown, metadata: Record<string, unknown> = {}): JobResponse {
  return { answer, success: false, metadata };
}

/**
 * An answer whose JSON text is already known. Transports write `json` as it is instead of
 * serialising `value` again; anything else that serialises it (MCP, forwarding) gets `value`
 * through `toJSON`. Large answers served from memory (10,000 Task statuses) use it.
 */
export class SerializedAnswer {
  constructor(
    readonly value: unknown,
    readonly json: string,
  ) {}

  toJSON(): unknown {
    return this.value;
  }
}

/** The JSON text of a JobResponse, reusing a SerializedAnswer's text. */
export function responseJson(response: JobResponse, prefix = '{'): string {
  const { answer, success, metadata } = response;
  const answerJson = answer instanceof SerializedAnswer ? answer.json : JSON.stringify(answer === undefined ? '' : answer);
  return `${prefix}"answer":${answerJson},"success":${success},"metadata":${JSON.stringify(metadata)}}`;
}

/** The plain value of an answer (for transports that need the object itself, such as MCP). */
export function plainAnswer(response: JobResponse): JobResponse {
  return response.answer instanceof SerializedAnswer ? { ...response, answer: response.answer.value } : response;
}
