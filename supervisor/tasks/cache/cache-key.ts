import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isObject } from '../../../core/is-object.js';
import { PACKAGE_VERSION } from '../../../core/build-info.js';
import { readJsonObject } from '../../common/json-file.js';
import type { TaskDefinition } from '../../../schemas/tasks.js';
import { readMetadata } from '../records/records.js';
import type { TaskIndex } from '../records/task-index.js';

/**
 * The result cache's key (docs/how-to/result-cache.md): sha256, as hex, of the canonical JSON (keys
 * sorted at every level, no spaces) of
 *
 *     { "v": 1, "task_type", "registration", "version",
 *       "inputs": the typed inputs after defaults, task_name left out (source_tasks as the
 *                 normalized comma-separated IDs, as recorded),
 *       "sources": [ { artifact name: sha256 } for each Task of source_tasks, in their order ] }
 *
 * `version` is the installed plugin package's version, or the service's for a built-in. The
 * artifacts' checksums come from each source Task's metadata.json (written by its run, never
 * recomputed here); a source that is not succeeded or has no metadata gives no key: the submit
 * runs.
 */
export const CACHE_KEY_VERSION = 1;

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  // Non-finite numbers are recorded as null (spec: metadata), so they key as null too.
  return typeof value === 'number' && !Number.isFinite(value) ? 'null' : JSON.stringify(value);
}

/** What the key is made of (see CACHE_KEY_VERSION's comment). */
export interface KeyParts {
  readonly task_type: string;
  readonly registration: string;
  readonly version: string;
  readonly inputs: Record<string, unknown>;
  readonly sources: ReadonlyArray<Record<string, string>>;
}

/** The key of these parts. */
export function cacheKeyOf(parts: KeyParts): string {
  return createHash('sha256').update(canonicalJson({ v: CACHE_KEY_VERSION, ...parts })).digest('hex');
}

/** The version a definition's code has: its plugin package's (null when unreadable), or the service's. */
async function codeVersionOf(definition: TaskDefinition, pluginsDir: string): Promise<string | null> {
  if (definition.plugin === null) return PACKAGE_VERSION;
  const pkg = await readJsonObject(join(pluginsDir, 'node_modules', ...definition.plugin.split('/'), 'package.json'));
  const version = pkg?.['version'];
  return typeof version === 'string' && version !== '' ? version : null;
}

/** Each source Task's artifacts as name → sha256, or null when one is not succeeded or has no metadata. */
async function sourceDigests(index: Pick<TaskIndex, 'get'>, ids: readonly string[]): Promise<Array<Record<string, string>> | null> {
  const digests: Array<Record<string, string>> = [];
  for (const id of ids) {
    const record = index.get(id);
    if (record?.state !== 'succeeded' || !record.hasMetadata) return null;
    const metadata = await readMetadata(record.dir, id);
    const artifacts = metadata?.output_params['artifacts'];
    if (!metadata || (artifacts !== undefined && !isObject(artifacts))) return null;
    const digest: Record<string, string> = {};
    for (const [name, artifact] of Object.entries(artifacts ?? {})) {
      const sha = isObject(artifact) ? artifact['sha256'] : undefined;
      if (typeof sha !== 'string') return null;
      digest[name] = sha;
    }
    digests.push(digest);
  }
  return digests;
}

/**
 * The key of a submit of `definition` with its checked `config` (defaults filled, source_tasks
 * normalized), or null when it cannot be keyed (a source not usable, a plugin version unreadable).
 */
export async function submitKeyOf(definition: TaskDefinition, config: Record<string, unknown>, sources: readonly string[], index: Pick<TaskIndex, 'get'>, pluginsDir: string): Promise<string | null> {
  const version = await codeVersionOf(definition, pluginsDir);
  const digests = version === null ? null : await sourceDigests(index, sources);
  if (version === null || digests === null) return null;
  const { task_name: _name, ...inputs } = config;
  return cacheKeyOf({ task_type: definition.task_type, registration: definition.name, version, inputs, sources: digests });
}
