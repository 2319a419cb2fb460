import type { JsonSchema } from '../../runner/task-sdk.js';

/**
 * The fields the runtime adds to every Task (spec: "Base input parameters of every Task"):
 * the catalog shows and submit validates the full schemas; authors declare only their own fields.
 */
const TASK_NAME_FIELD = {
  anyOf: [{ type: 'string', pattern: '^([A-Za-z0-9-]{1,32})?$' }, { type: 'null' }],
  default: null,
  description: 'Instance name: 1-32 letters, digits or hyphens; empty or omitted generates a unique name',
};

const SOURCE_TASKS_FIELD = {
  type: 'string',
  default: '',
  description: 'Task IDs this Task derives from, separated by ASCII commas',
};

const ARTIFACTS_FIELD = {
  type: 'object',
  default: {},
  description: 'Artifacts by logical name',
  additionalProperties: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1 },
      size: { type: 'integer', minimum: 0 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
    required: ['path', 'size', 'sha256'],
  },
};

function withFields(schema: JsonSchema, fields: Record<string, unknown>): JsonSchema {
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  return { ...schema, type: 'object', properties: { ...properties, ...fields }, additionalProperties: false };
}

/** Business input schema plus task_name and source_tasks; extra fields forbidden. */
export function fullInputSchema(schema: JsonSchema): JsonSchema {
  return withFields(schema, { task_name: TASK_NAME_FIELD, source_tasks: SOURCE_TASKS_FIELD });
}

/** Business output schema plus artifacts; extra fields forbidden. */
export function fullOutputSchema(schema: JsonSchema): JsonSchema {
  return withFields(schema, { artifacts: ARTIFACTS_FIELD });
}
