import { execFile } from 'node:child_process';
import { lstat, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TaskDefinition, TaskResources, TaskRetries } from '../../schemas/tasks.js';
import { BUILTIN_TASKS } from '../../runner/builtins.js';
import { COMMAND_TASK } from '../../runner/command-tasks.js';
import { DESCRIBE_LOADING, DESCRIBE_MARKER } from '../../runner/task-sdk.js';
import { parseDescribeAnswer, type DescribeAnswer as Described } from '../../schemas/describe-answer.js';
import { ValueError } from '../../core/errors.js';
import { pluginsDirOf, readDependencies } from './installed-plugins.js';
import { fullInputSchema, fullOutputSchema } from './base-fields.js';
import { taskEnvironment } from './engines/task-environment.js';

const run = promisify(execFile);
const DESCRIBER = fileURLToPath(new URL('../../runner/describe.js', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** A plugin whose module hangs on import must not hold the service start for long. */
const DESCRIBE_TIMEOUT_MS = 20_000;

/** A definition and where the runner finds its code ('' = built-in). */
export interface CatalogEntry {
  readonly definition: TaskDefinition;
  readonly module: string;
}

/** Config `tasks.<registration>`: resources (per field), retries and cache, by registration name. */
export type ResourceOverrides = Readonly<Record<string, { readonly resources?: TaskResources; readonly retries?: TaskRetries; readonly cache?: boolean }>>;

/**
 * Lets plugin code `import { defineTask } from 'taskyard/task'` without installing taskyard:
 * `<plugins>/node_modules/taskyard` points at this package (unless a plugin install put one there).
 */
async function linkSdk(pluginsDir: string): Promise<void> {
  const link = join(pluginsDir, 'node_modules', 'taskyard');
  if (await lstat(link).then(() => true, () => false)) return;
  await mkdir(join(pluginsDir, 'node_modules'), { recursive: true });
  await symlink(PACKAGE_ROOT, link, 'dir').catch(() => undefined);
}

/** A describer run that gave no answer: the plugin it was loading (if any) and why. */
interface DescribeFailure {
  readonly plugin: string | undefined;
  readonly cause: string;
}

/** The plugin the describer said it was loading last (the one that took it down), and what it printed since. */
function blame(stderr: string): { plugin: string | undefined; said: string | undefined } {
  const at = stderr.lastIndexOf(DESCRIBE_LOADING);
  const plugin = at === -1 ? undefined : stderr.slice(at + DESCRIBE_LOADING.length).split('\n', 1)[0];
  const since = at === -1 ? stderr : stderr.slice(at).split('\n').slice(1).join('\n');
  return { plugin, said: since.trim().split('\n').at(-1)?.slice(0, 300) || undefined };
}

/**
 * One run of the describer child over `plugins`; plugin code is only ever evaluated there (as
 * `service.run_as`, when set: `extraEnv`).
 */
async function describeOnce(pluginsDir: string, plugins: readonly string[], extraEnv: Readonly<Record<string, string>>): Promise<Described | DescribeFailure> {
  let ended: { stderr: string; cause: string };
  try {
    const { stdout, stderr } = await run(process.execPath, [DESCRIBER, pluginsDir, ...plugins], { env: taskEnvironment(extraEnv), timeout: DESCRIBE_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, killSignal: 'SIGKILL' });
    const at = stdout.lastIndexOf(DESCRIBE_MARKER);
    const answer = at === -1 ? { problem: 'the describer exited before its answer' } : parseDescribeAnswer(stdout.slice(at + DESCRIBE_MARKER.length));
    if (!('problem' in answer)) return answer;
    ended = { stderr, cause: answer.problem };
  } catch (err) {
    const { stderr = '', killed, code, signal } = err as { stderr?: string; killed?: boolean; code?: unknown; signal?: unknown };
    const exit = typeof code === 'number' ? `code ${code}` : typeof signal === 'string' ? `signal ${signal}` : String(code ?? 'an error');
    ended = { stderr, cause: killed ? `loading did not finish within ${DESCRIBE_TIMEOUT_MS / 1000} s (the describer was killed)` : `the describer exited with ${exit}` };
  }
  const { plugin, said } = blame(ended.stderr);
  const cause = `${ended.cause}${said ? `: ${said}` : ''}`;
  return { plugin, cause: plugin === undefined ? `describing plugins failed: ${cause}` : cause };
}

/**
 * Describes every installed plugin (the prefix's package.json lists them). A plugin that takes the
 * describer down (a crash, a hang that even the describer's own per-plugin limit cannot stop) is
 * named with the cause and left out, and the others are described again without it: one broken
 * plugin never drops the others' Tasks.
 */
async function describePlugins(pluginsDir: string, extraEnv: Readonly<Record<string, string>>): Promise<Described> {
  let plugins: string[];
  try {
    plugins = [...(await readDependencies(pluginsDir)).keys()].sort();
  } catch (err) {
    return { definitions: [], errors: [(err as Error).message] };
  }
  if (!plugins.length || !(await lstat(join(pluginsDir, 'node_modules')).then((s) => s.isDirectory(), () => false))) return { definitions: [], errors: [] };
  await linkSdk(pluginsDir);
  const errors: string[] = [];
  for (;;) {
    const described = await describeOnce(pluginsDir, plugins, extraEnv);
    if ('definitions' in described) return { definitions: described.definitions, errors: [...errors, ...described.errors] };
    if (described.plugin === undefined || !plugins.includes(described.plugin)) return { definitions: [], errors: [...errors, described.cause] };
    plugins = plugins.filter((p) => p !== described.plugin);
    errors.push(`plugin ${described.plugin}: ${described.cause}`);
  }
}

type DefinitionParts = Omit<TaskDefinition, 'input_schema' | 'output_schema'> & { input_schema: Record<string, unknown>; output_schema: Record<string, unknown> };

/** The catalog's entry: full schemas, the definition's resources with config's override per field, config's retries and cache over the definition's. */
function entryOf(def: DefinitionParts, module: string, overrides: ResourceOverrides): CatalogEntry {
  const override = overrides[def.name];
  const resources = Object.freeze({ ...def.resources, ...override?.resources });
  const retries = override?.retries ?? def.retries;
  const cache = override?.cache ?? def.cache;
  return Object.freeze({
    definition: Object.freeze({ ...def, resources, ...(retries && { retries }), ...(cache !== undefined && { cache }), input_schema: fullInputSchema(def.input_schema), output_schema: fullOutputSchema(def.output_schema) }),
    module,
  });
}

/**
 * The installed Task definitions: built-ins plus those plugins declare, described once by a
 * child process and cached until `reload()` (after a plugin is installed or removed).
 */
export class DefinitionCatalog {
  readonly #pluginsDir: string;
  readonly #overrides: ResourceOverrides;
  #entries = new Map<string, CatalogEntry>();
  #errors: string[] = [];
  #described: Described = { definitions: [], errors: [] };

  /** `describerEnv`: variables for the describer (who it runs as, runAsVariables). */
  /** `commandTask`: whether the built-in `command` is offered (only where a token guards the service). */
  constructor(
    workspace: string,
    overrides: ResourceOverrides = {},
    readonly describerEnv: Readonly<Record<string, string>> = {},
    readonly commandTask = false,
  ) {
    this.#pluginsDir = pluginsDirOf(workspace);
    this.#overrides = overrides;
  }

  get pluginsDir(): string {
    return this.#pluginsDir;
  }

  async reload(): Promise<void> {
    this.#build(await describePlugins(this.#pluginsDir, this.describerEnv));
  }

  /**
   * Takes over what `staged` described of a prefix that has since been renamed from `from` to
   * `to` (real paths), instead of starting a describer again over the same code: module paths
   * inside the moved prefix are rewritten, this catalog's resource overrides applied.
   */
  adopt(staged: DefinitionCatalog, from: string, to: string): void {
    const moved = (module: string) => (module.startsWith(`${from}/`) ? `${to}${module.slice(from.length)}` : module);
    const { definitions, errors } = staged.#described;
    this.#build({ definitions: definitions.map((d) => ({ ...d, module: moved(d.module) })), errors });
  }

  #build(described: Described): void {
    const entries = new Map<string, CatalogEntry>();
    for (const def of BUILTIN_TASKS) {
      if (def.name === COMMAND_TASK && !this.commandTask) continue;
      entries.set(def.name, entryOf({ name: def.name, source: 'native', plugin: null, task_type: def.task_type, description: def.description, input_schema: def.input_schema, output_schema: def.output_schema, resources: def.resources }, '', this.#overrides));
    }
    const errors = [...described.errors];
    for (const { module, ...def } of described.definitions) {
      if (entries.has(def.name)) errors.push(`plugin ${def.plugin}: Task name ${def.name} is already registered`);
      else entries.set(def.name, entryOf({ ...def, source: 'plugin' }, module, this.#overrides));
    }
    this.#described = described;
    this.#entries = entries;
    this.#errors = errors;
  }

  get(name: string): CatalogEntry | undefined {
    return this.#entries.get(name);
  }

  names(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** Registration names that come from `plugin`, sorted. */
  registrationsOf(plugin: string): string[] {
    return this.names().filter((n) => this.#entries.get(n)!.definition.plugin === plugin);
  }

  /** Problems found while describing plugins (an invalid definition fails the listing, per spec). */
  get errors(): readonly string[] {
    return this.#errors;
  }

  /** The entry of a registration name, or the spec's ValueError listing the available names. */
  require(name: string): CatalogEntry {
    const entry = this.#entries.get(name);
    if (!entry) throw new ValueError(`Unknown task ${JSON.stringify(name)}. Available tasks: ${this.names().join(', ')}`);
    return entry;
  }

  /** Every definition sorted by registration name. */
  list(): TaskDefinition[] {
    if (this.#errors.length) throw new ValueError(`invalid task definitions: ${this.#errors.join('; ')}`);
    return this.names().map((n) => this.#entries.get(n)!.definition);
  }
}
