import { isObject } from '../core/is-object.js';
import type { ArtifactRecord } from '../schemas/tasks.js';
import { resolveInsideTaskDir } from './task-context.js';
import { TaskError, type JsonSchema } from './task-sdk.js';

/**
 * Structural check of a Task's output against its declared fields (extra fields forbidden,
 * required ones present) and merge of the artifacts. Deliberately not a full JSON Schema
 * validator: loading ajv would cost every run tens of milliseconds.
 */
export function buildOutput(dir: string, output: unknown, schema: JsonSchema, registered: Map<string, ArtifactRecord>): Record<string, unknown> {
  const value = output === undefined ? {} : output;
  if (!isObject(value)) throw new TaskError('ValueError', 'the Task must return an object of its output fields');
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  const extra = Object.keys(value).filter((k) => k !== 'artifacts' && !(k in properties));
  if (extra.length) throw new TaskError('ValueError', `output field(s) not declared by the Task: ${extra.join(', ')}`);
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  const missing = required.filter((k) => value[k] === undefined);
  if (missing.length) throw new TaskError('ValueError', `output field(s) missing: ${missing.join(', ')}`);
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
