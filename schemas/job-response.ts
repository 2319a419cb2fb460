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
