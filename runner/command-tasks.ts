/**
 * Command Tasks: definitions whose run is a command, not a function. The built-in `command` Task
 * runs any argv it is given; a plugin's manifest (JSON or YAML, docs/task-protocol.md) declares
 * typed Tasks, each a fixed command. Both run through runner/command-run.ts and report over the
 * Task protocol. The runner bundle imports this: node built-ins only at load time.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { isObject } from '../core/is-object.js';
import type { CommandSpec } from './command-run.js';
import { checkDefinitionFields, DefinitionError, TaskError, type DefinitionFields, type TaskDefinitionEntry } from './task-sdk.js';
import { importModule } from './import-module.js';

/** Where one run of a command Task happens. */
export interface CommandPlace {
  readonly workspace: string;
  /** The Task directory. */
  readonly dir: string;
  /** The JSON file with the run's inputs (TASKYARD_INPUTS). */
  readonly inputsFile: string;
}

/** A Task whose run is a command. */
export interface CommandTaskDefinition extends DefinitionFields {
  /** The command of one run, from its (validated) inputs; throws a TaskError for inputs it cannot run. */
  readonly command: (input: Record<string, unknown>, place: CommandPlace) => CommandSpec;
  /** The output carries the command's `exit_code` (the built-in `command` Task). */
  readonly answersExitCode: boolean;
}

export type AnyTaskDefinition = TaskDefinitionEntry | CommandTaskDefinition;

export function isCommandTask(def: AnyTaskDefinition): def is CommandTaskDefinition {
  return 'command' in def;
}

/** The registration name of the built-in Task that runs any command (public like `shell`). */
export const COMMAND_TASK = 'command';

/** `path` (workspace-relative) resolved inside the workspace, symlinks included; anything else is refused. */
function insideWorkspace(workspace: string, path: string): string {
  if (isAbsolute(path) || path.includes('\0')) throw new TaskError('ValueError', `cwd must be a path relative to the workspace: ${JSON.stringify(path)}`);
  let real: string;
  try {
    real = realpathSync(resolve(workspace, path));
  } catch {
    throw new TaskError('FileNotFoundError', `cwd not found in the workspace: ${path}`);
  }
  const rel = relative(realpathSync(workspace), real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new TaskError('PermissionError', `cwd escapes the workspace: ${path}`);
  return real;
}

/** Variables a Task may not set: the run's identity and mark, by which a cancel finds its processes. */
function checkedEnv(env: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(isObject(env) ? env : {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TaskError('ValueError', `env: ${JSON.stringify(name)} is not a variable name (letters, digits and _)`);
    if (name.startsWith('TASKYARD_')) throw new TaskError('ValueError', `env: ${name} is set by taskyard and cannot be given`);
    if (typeof value !== 'string' || value.includes('\0')) throw new TaskError('ValueError', `env: ${name} must be a string without NUL`);
    out[name] = value;
  }
  return out;
}

/** TASKYARD_INPUT_<NAME> for each input that is a string, number or boolean (for shell scripts). */
function inputVariables(input: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out[`TASKYARD_INPUT_${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`] = String(value);
    }
  }
  return out;
}

export const commandTask: CommandTaskDefinition = Object.freeze({
  name: COMMAND_TASK,
  task_type: 'command',
  description:
    'Runs a command (argv, without a shell) as a tracked Task, in the Task directory unless `cwd` (workspace-relative) says ' +
    'otherwise, with the Task environment plus `env`; `resources` (cpus, gpus, memory_mb, time_limit_s) is what this run holds. Its stdout and stderr go to task.log; it may report steps, ' +
    'progress, metrics, artifacts and output fields over the Task protocol (docs/task-protocol.md; Python: import taskyard_task). ' +
    'Exit code 0 succeeds with {exit_code, ...reported output}; any other fails with the code and the last stderr line.',
  input_schema: {
    type: 'object',
    properties: {
      argv: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'The program and its arguments, run without a shell' },
      cwd: { type: 'string', description: 'Working directory, relative to the workspace (default: the Task directory)' },
      env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Variables added to the Task environment' },
      resources: {
        type: 'object',
        description: 'What this run holds (GPUs are leased and named in CUDA_VISIBLE_DEVICES; on Slurm these become sbatch options)',
        properties: {
          cpus: { type: 'integer', minimum: 1, maximum: 4096 },
          gpus: { type: 'integer', minimum: 0, maximum: 64 },
          memory_mb: { type: 'integer', minimum: 1 },
          time_limit_s: { type: 'integer', minimum: 1 },
        },
        additionalProperties: false,
      },
    },
    required: ['argv'],
  },
  output_schema: {
    type: 'object',
    properties: { exit_code: { type: 'integer', description: 'The command exit code (0: a failed command fails the Task)' } },
    required: ['exit_code'],
    additionalProperties: true,
  },
  resources: Object.freeze({}),
  answersExitCode: true,
  command(input: Record<string, unknown>, place: CommandPlace): CommandSpec {
    const argv = input['argv'];
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string') || !argv[0]) {
      throw new TaskError('ValueError', 'argv must be a non-empty array of strings whose first is the program');
    }
    const cwd = typeof input['cwd'] === 'string' && input['cwd'] !== '' ? insideWorkspace(place.workspace, input['cwd']) : place.dir;
    return { argv: argv as string[], cwd, env: { ...inputVariables(input), ...checkedEnv(input['env']) } };
  },
});

const PLACEHOLDERS = ['plugin_dir', 'task_dir', 'workspace', 'inputs_file'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/** Checks a manifest string for unknown placeholders; returns it unchanged. */
function checkTemplate(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new DefinitionError(`${where} must be a string`);
  for (const [, name] of value.replace(/\{\{|\}\}/g, '').matchAll(/\{([^{}]*)\}/g)) {
    if (!PLACEHOLDERS.includes(name as Placeholder)) throw new DefinitionError(`${where}: unknown placeholder {${name}}; use ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`);
  }
  return value;
}

function fill(template: string, values: Readonly<Record<Placeholder, string>>): string {
  return template.replace(/\{\{|\}\}|\{([a-z_]+)\}/g, (whole, name?: string) => (name ? values[name as Placeholder] : whole[0]!));
}

/** One manifest entry as a command Task; `pluginDir` is the manifest's directory. */
export function manifestTask(value: unknown, pluginDir: string): CommandTaskDefinition {
  if (!isObject(value)) throw new DefinitionError('a Task in a manifest must be an object');
  // A script without inputs or outputs need not write empty schemas for them.
  const empty = { type: 'object', properties: {} };
  const fields = checkDefinitionFields({
    ...value,
    input: value['input'] ?? value['input_schema'] ?? empty,
    output: value['output'] ?? value['output_schema'] ?? empty,
  });
  const where = `Task '${fields.name}'`;
  const argv = value['command'];
  if (!Array.isArray(argv) || argv.length === 0) throw new DefinitionError(`${where}: command must be a non-empty array of strings (the program and its arguments, no shell)`);
  const templates = argv.map((a, i) => checkTemplate(a, `${where}: command[${i}]`));
  const envTemplates = Object.entries(isObject(value['env']) ? value['env'] : {}).map(([k, v]) => [k, checkTemplate(v, `${where}: env.${k}`)] as const);
  if (value['env'] !== undefined && !isObject(value['env'])) throw new DefinitionError(`${where}: env must be an object of strings`);
  return Object.freeze({
    ...fields,
    answersExitCode: false,
    command(input: Record<string, unknown>, place: CommandPlace): CommandSpec {
      const values = { plugin_dir: pluginDir, task_dir: place.dir, workspace: place.workspace, inputs_file: place.inputsFile };
      const env = checkedEnv(Object.fromEntries(envTemplates.map(([k, v]) => [k, fill(v, values)])));
      return { argv: templates.map((t) => fill(t, values)), cwd: place.dir, env: { ...inputVariables(input), ...env } };
    },
  });
}

/** Whether a plugin's `taskyard.tasks` names a manifest rather than a module. */
export function isManifestFile(file: string): boolean {
  return /\.(json|ya?ml)$/i.test(file);
}

/** The Tasks a manifest file declares (`{tasks: [...]}`); a bad entry fails the whole manifest, naming it. */
export async function readManifest(file: string): Promise<CommandTaskDefinition[]> {
  const text = readFileSync(file, 'utf8');
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : (await importModule<{ parse(text: string): unknown }>('yaml')).parse(text);
  } catch (err) {
    // The parser's first line says what and where; the source excerpt after it is noise in an answer.
    throw new DefinitionError(`the manifest ${file} could not be parsed: ${(err as Error).message.split('\n', 1)[0]}`);
  }
  const tasks = isObject(doc) ? doc['tasks'] : undefined;
  if (!Array.isArray(tasks)) throw new DefinitionError(`the manifest ${file} must have a list under "tasks"`);
  return tasks.map((t) => manifestTask(t, dirname(file)));
}
