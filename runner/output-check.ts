import { isObject } from '../core/is-object.js';
import type { ArtifactRecord } from '../schemas/tasks.js';
import { resolveInsideTaskDir } from './artifact-record.js';
import { TaskError, type JsonSchema } from './task-sdk.js';

/** Whether `value` is of the JSON Schema `type` named (one name, or any of a list). */
function hasType(value: unknown, type: unknown): boolean {
  if (Array.isArray(type)) return type.some((t) => hasType(value, t));
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

/**
 * The `type` and `enum` of each declared field a command reported: its output comes from a process
 * that cannot see the schema, so a reported `"0.9"` for a number is caught here, not by a reader.
 */
function checkFieldTypes(value: Record<string, unknown>, properties: Record<string, unknown>): void {
  for (const [name, schema] of Object.entries(properties)) {
    if (!isObject(schema) || value[name] === undefined || name === 'artifacts') continue;
    if (schema['type'] !== undefined && !hasType(value[name], schema['type'])) {
      throw new TaskError('ValueError', `output field ${name} must be of type ${JSON.stringify(schema['type'])}, got ${JSON.stringify(value[name])}`);
    }
    if (Array.isArray(schema['enum']) && !schema['enum'].some((e) => JSON.stringify(e) === JSON.stringify(value[name]))) {
      throw new TaskError('ValueError', `output field ${name} must be one of ${JSON.stringify(schema['enum'])}, got ${JSON.stringify(value[name])}`);
    }
  }
}

/**
 * Structural check of a Task's output against its declared fields (extra fields forbidden unless
 * the schema allows them, required ones present; with `checkTypes`, each field's type and enum)
 * and merge of the artifacts. Deliberately not a full JSON Schema validator: loading ajv would
 * cost every run tens of milliseconds.
 */
export function buildOutput(dir: string, output: unknown, schema: JsonSchema, registered: Map<string, ArtifactRecord>, checkTypes = false): Record<string, unknown> {
  const value = output === undefined ? {} : output;
  if (!isObject(value)) throw new TaskError('ValueError', 'the Task must return an object of its output fields');
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  const extra = schema['additionalProperties'] === true ? [] : Object.keys(value).filter((k) => k !== 'artifacts' && !(k in properties));
  if (extra.length) throw new TaskError('ValueError', `output field(s) not declared by the Task: ${extra.join(', ')}`);
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  const missing = required.filter((k) => value[k] === undefined);
  if (missing.length) throw new TaskError('ValueError', `output field(s) missing: ${missing.join(', ')}`);
  if (checkTypes) checkFieldTypes(value, properties);
  const artifacts: Record<string, ArtifactRecord> = {};
  const declared = value['artifacts'] ?? {};
  if (!isObject(declared)) throw new TaskError('ValueError', 'output artifacts must be a mapping from logical name to artifact record');
  for (const [name, record] of Object.entries(declared)) {
    if (!isObject(record) || typeof record['path'] !== 'string' || !Number.isInteger(record['size']) || !/^[0-9a-f]{64}$/.test(String(record['sha256']))) {
      throw new TaskError('ValueError', `artifact ${name} must be {path, size, sha256}`);
    }
    resolveInsideTaskDir(dir, record['path']);
    artifacts[name] = { path: record['path'], size: record['size'] as number, sha256: record['sha256'] as string };
  }
  for (const [name, record] of registered) artifacts[name] = record;
  return { ...value, artifacts };
}
