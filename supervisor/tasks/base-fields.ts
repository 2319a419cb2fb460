import type { JsonSchema } from '../../runner/task-sdk.js';
import { BaseTaskInput, BaseTaskOutput } from '../../schemas/tasks.js';

/** A Task's schema with the runtime's fields added (the catalog shows and submit validates these; authors declare only their own fields). */
function withFields(schema: JsonSchema, fields: Record<string, unknown>, extra: unknown = false): JsonSchema {
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  return { ...schema, type: 'object', properties: { ...properties, ...fields }, additionalProperties: extra };
}

/** Business input schema plus task_name and source_tasks; extra fields forbidden. */
export function fullInputSchema(schema: JsonSchema): JsonSchema {
  return withFields(schema, BaseTaskInput.properties);
}

/**
 * Business output schema plus artifacts; extra fields forbidden unless the Task allows them (the
 * `command` Task answers whatever its process reported).
 */
export function fullOutputSchema(schema: JsonSchema): JsonSchema {
  return withFields(schema, BaseTaskOutput.properties, schema['additionalProperties'] === true ? true : false);
}
