/**
 * The Task SDK (`taskyard/task`): `defineTask` and the context a Task receives. Plugins import it,
 * and the task runner loads it on every spawn, so at runtime it imports only two tiny modules that
 * import nothing themselves.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { isObject } from '../core/is-object.js';
import { REGISTRATION_NAME, TASK_TYPE } from '../core/task-record/id-rules.js';
import type { ArtifactRecord, BaseTaskInput, RetryCause, TaskResources, TaskRetries } from '../schemas/tasks.js';
import type { FromJsonSchema } from '../schemas/json-schema.js';

export type { ArtifactRecord, BaseTaskInput, RetryCause, TaskResources, TaskRetries };
export { REGISTRATION_NAME, TASK_TYPE };
/** A JSON Schema object (TypeBox schemas are JSON Schemas too). */
export type JsonSchema = Record<string, unknown>;

/** Writes timestamped lines to the Task log (`task.log`). */
export interface TaskLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The spec's frozen TaskContext plus the step, progress and artifact helpers. */
export interface TaskContext {
  readonly workspace_path: string;
  readonly registration_name: string;
  readonly task_id: string;
  readonly run_id: string;
  readonly created_at: string;
  readonly logger: TaskLogger;
  /** Runs `fn` as a named step, recording its start and finish in the status. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Percentage (0-100) of the current step; writes are coalesced, the last value always lands. */
  progress(percentage: number): void;
  /** Records one point of a metric series (metrics.jsonl); `step` is the x a chart puts it at (time, without). */
  metric(name: string, value: number, options?: { step?: number }): void;
  /** Registers a file under the Task directory as an artifact; size and sha256 are computed here. */
  artifact(name: string, relativePath: string): Promise<ArtifactRecord>;
}

/** The value a schema describes: TypeBox's Static, or that of a literal plain JSON Schema, else `Fallback`. */
type Infer<S, Fallback> = S extends TSchema ? Static<S> : FromJsonSchema<S> extends infer T ? (unknown extends T ? Fallback : T) : Fallback;

/** What a Task author writes. Schemas are JSON Schemas (TypeBox ones included). */
export interface TaskSpec<I extends JsonSchema | TSchema = JsonSchema, O extends JsonSchema | TSchema = JsonSchema> {
  name: string;
  taskType: string;
  description: string;
  input: I;
  output: O;
  /** CPUs, GPUs, memory and time a run needs (config `tasks.<name>.resources` overrides it). */
  resources?: TaskResources;
  /** How failed runs are tried again (config `tasks.<name>.retries` replaces it); none by default. */
  retries?: RetriesSpec;
  /** Whether a submit with the same inputs answers from an earlier succeeded run (config `tasks.<name>.cache`). */
  cache?: boolean;
  run(input: Infer<I, Record<string, unknown>> & BaseTaskInput, ctx: TaskContext): Promise<Infer<O, Record<string, unknown>>> | Infer<O, Record<string, unknown>>;
}

/** A checked definition, as the runtime uses it: plain JSON Schemas of the business fields. */
export interface TaskDefinitionEntry {
  readonly name: string;
  readonly task_type: string;
  readonly description: string;
  readonly input_schema: JsonSchema;
  readonly output_schema: JsonSchema;
  readonly resources: TaskResources;
  readonly retries?: TaskRetries;
  readonly cache?: boolean;
  readonly run: (input: Record<string, unknown>, ctx: TaskContext) => unknown;
}

const TASK_ERROR = Symbol.for('taskyard.TaskError');

/** A failure with the spec's `<Type>: <message>` text and, optionally, a custom exit code. */
export class TaskError extends Error {
  readonly [TASK_ERROR] = true;

  constructor(
    readonly type: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = type;
  }

  /**
   * By brand, not by class: the runner carries its own bundled copy of this module, and plugins
   * may bundle theirs, yet a TaskError thrown from any copy keeps its type and exit code.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TASK_ERROR] === true;
  }
}

const MIN_DESCRIPTION = 10;
const RESERVED_INPUTS = ['task_name', 'source_tasks'];
const RESERVED_OUTPUTS = ['artifacts'];

/** Why a value is not a usable Task definition (the message names the Task and the reason). */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
}

/** Drops TypeBox's symbol keys: what is left is the plain JSON Schema. */
function plainObjectSchema(schema: unknown, label: string, reserved: string[]): JsonSchema {
  if (!isObject(schema)) throw new DefinitionError(`${label} must be a JSON Schema object`);
  const plain = JSON.parse(JSON.stringify(schema)) as JsonSchema;
  if (plain['type'] !== undefined && plain['type'] !== 'object') throw new DefinitionError(`${label} must describe an object (type "object")`);
  const properties = plain['properties'] ?? {};
  if (!isObject(properties)) throw new DefinitionError(`${label}.properties must be an object`);
  const clash = reserved.find((name) => name in properties);
  if (clash) throw new DefinitionError(`${label} must not declare ${clash}: the runtime adds it`);
  return { ...plain, type: 'object', properties };
}

const RESOURCE_LIMITS: Record<keyof TaskResources, [min: number, max: number]> = {
  cpus: [1, 4096],
  gpus: [0, 64],
  memory_mb: [1, 2 ** 40],
  time_limit_s: [1, 2 ** 31],
};

/** The declared resources, checked by hand: the SDK does not load a validator (see top). */
function checkResources(value: unknown, where: string): TaskResources {
  if (value === undefined) return {};
  if (!isObject(value)) throw new DefinitionError(`${where}: resources must be an object such as { cpus: 1, gpus: 0 }`);
  const out: Record<string, number> = {};
  for (const [key, amount] of Object.entries(value)) {
    const limits = RESOURCE_LIMITS[key as keyof TaskResources];
    if (!limits) throw new DefinitionError(`${where}: resources.${key} is unknown; use ${Object.keys(RESOURCE_LIMITS).join(', ')}`);
    if (!Number.isInteger(amount) || (amount as number) < limits[0] || (amount as number) > limits[1]) {
      throw new DefinitionError(`${where}: resources.${key} must be an integer from ${limits[0]} to ${limits[1]}; got ${JSON.stringify(amount)}`);
    }
    out[key] = amount as number;
  }
  return out;
}

/** A retry policy as a Task author writes it: `max` is required, the rest has defaults. */
export type RetriesSpec = { max: number } & Partial<Omit<TaskRetries, 'max'>>;

const RETRY_CAUSES: readonly RetryCause[] = ['lost', 'node_fail', 'timeout'];
const RETRY_FIELDS = ['max', 'on', 'exit_codes', 'backoff_s'];
const MAX_RETRIES = 100;
const MAX_BACKOFF_S = 3600;

/** The declared retry policy with its defaults filled (by hand, as resources), or undefined when none is. */
function checkRetries(value: unknown, where: string): TaskRetries | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new DefinitionError(`${where}: retries must be an object such as { max: 2, on: ['lost', 'node_fail'] }`);
  const unknown = Object.keys(value).find((k) => !RETRY_FIELDS.includes(k));
  if (unknown) throw new DefinitionError(`${where}: retries.${unknown} is unknown; use ${RETRY_FIELDS.join(', ')}`);
  const { max, on = ['lost', 'node_fail'], exit_codes = [], backoff_s = 0 } = value;
  if (!Number.isInteger(max) || (max as number) < 0 || (max as number) > MAX_RETRIES) throw new DefinitionError(`${where}: retries.max must be an integer from 0 to ${MAX_RETRIES}; got ${JSON.stringify(max)}`);
  if (!Array.isArray(on) || on.some((c) => !RETRY_CAUSES.includes(c as RetryCause))) throw new DefinitionError(`${where}: retries.on must be an array of ${RETRY_CAUSES.join(', ')}; got ${JSON.stringify(on)}`);
  if (!Array.isArray(exit_codes) || exit_codes.some((c) => !Number.isInteger(c) || c < 1 || c > 255)) throw new DefinitionError(`${where}: retries.exit_codes must be an array of integers from 1 to 255; got ${JSON.stringify(exit_codes)}`);
  if (typeof backoff_s !== 'number' || !(backoff_s >= 0 && backoff_s <= MAX_BACKOFF_S)) throw new DefinitionError(`${where}: retries.backoff_s must be a number of seconds from 0 to ${MAX_BACKOFF_S}; got ${JSON.stringify(backoff_s)}`);
  return Object.freeze({ max: max as number, on: [...new Set(on as RetryCause[])], exit_codes: [...new Set(exit_codes as number[])], backoff_s });
}

/** The fields every Task definition has, whatever runs it: what the catalog lists. */
export type DefinitionFields = Omit<TaskDefinitionEntry, 'run'>;

/**
 * Checks the fields every definition has (name, task type, description, schemas, resources),
 * written as `taskType`/`input`/`output` or `task_type`/`input_schema`/`output_schema`.
 */
export function checkDefinitionFields(value: Record<string, unknown>): DefinitionFields {
  const name = value['name'];
  if (typeof name !== 'string' || !REGISTRATION_NAME.test(name)) {
    throw new DefinitionError(`Task name ${JSON.stringify(name)} is invalid: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  const where = `Task '${name}'`;
  const taskType = value['taskType'] ?? value['task_type'];
  if (taskType === 'tmp') throw new DefinitionError(`${where}: task type "tmp" is reserved for staged uploads`);
  if (typeof taskType !== 'string' || !TASK_TYPE.test(taskType)) {
    throw new DefinitionError(`${where}: task type ${JSON.stringify(taskType)} is invalid: use 1-64 letters, digits, '_' or '-', starting with a letter or digit`);
  }
  const description = value['description'];
  if (typeof description !== 'string' || description.trim().length < MIN_DESCRIPTION || !/[A-Za-z]/.test(description)) {
    throw new DefinitionError(`${where}: a detailed description is required (at least ${MIN_DESCRIPTION} characters of real text)`);
  }
  return {
    name,
    task_type: taskType,
    description: description.trim(),
    input_schema: plainObjectSchema(value['input'] ?? value['input_schema'], `${where}: input schema`, RESERVED_INPUTS),
    output_schema: plainObjectSchema(value['output'] ?? value['output_schema'], `${where}: output schema`, RESERVED_OUTPUTS),
    resources: Object.freeze(checkResources(value['resources'], where)),
    ...checkPolicy(value, where),
  };
}

/** `retries` and `cache`, present only where declared (the catalog lists what a definition says). */
function checkPolicy(value: Record<string, unknown>, where: string): Pick<DefinitionFields, 'retries' | 'cache'> {
  const retries = checkRetries(value['retries'], where);
  const cache = value['cache'];
  if (cache !== undefined && typeof cache !== 'boolean') throw new DefinitionError(`${where}: cache must be true or false; got ${JSON.stringify(cache)}`);
  return { ...(retries && { retries }), ...(cache !== undefined && { cache }) };
}

/**
 * Checks a definition (made by `defineTask` or written as a plain object with the same fields, or
 * with `task_type`/`input_schema`/`output_schema`) and returns it normalised.
 */
export function normalizeTask(value: unknown): TaskDefinitionEntry {
  if (!isObject(value)) throw new DefinitionError('a Task definition must be an object');
  const fields = checkDefinitionFields(value);
  const run = value['run'];
  if (typeof run !== 'function') throw new DefinitionError(`Task '${fields.name}': run must be a function`);
  return Object.freeze({ ...fields, run: run as TaskDefinitionEntry['run'] });
}

/**
 * Declares a Task; `run`'s input and answer are typed from the schemas (a plain JSON Schema written
 * inline is read as a literal). Throws a DefinitionError with a clear reason when the definition is unusable. */
export function defineTask<const I extends JsonSchema | TSchema, const O extends JsonSchema | TSchema>(spec: TaskSpec<I, O>): TaskDefinitionEntry {
  return normalizeTask(spec);
}

/** Precedes the describer's answer on stdout, so output printed by plugin code cannot be mistaken for it. */
export const DESCRIBE_MARKER = '@@taskyard-definitions@@';
/** Printed on stderr by the describer, with the plugin's name, before it loads that plugin. */
export const DESCRIBE_LOADING = '@@taskyard-loading@@';

/** Picks the definitions out of a Task module: default export or named `tasks`, an array. */
export function definitionsOfModule(mod: Record<string, unknown>): unknown[] {
  const list = mod['default'] ?? mod['tasks'];
  if (!Array.isArray(list)) throw new DefinitionError('the task module must export an array of definitions (default export or `tasks`)');
  return list;
}
