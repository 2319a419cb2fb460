import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { isManifestFile, readManifest } from '../runner/command-tasks.js';
import { definitionsOfModule, normalizeTask, type DefinitionFields } from '../runner/task-sdk.js';
import { UsageError } from './cli-errors.js';

/** Why a module could not be loaded, said with what to do about it. */
function loadProblem(file: string, err: Error & { code?: string }): string {
  if (err.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts$/.test(file)) {
    return `${file} is TypeScript, which Node does not run: build the plugin (\`npm run build\`) and give the compiled .js module`;
  }
  if (err.code === 'ERR_MODULE_NOT_FOUND' && err.message.includes("'taskyard'")) {
    return `${file} imports taskyard/task, which is not linked next to it: run \`npm install -D file:${PACKAGE_ROOT}\` in the plugin (taskyard plugin init sets this up)`;
  }
  return `${file} could not be loaded: ${err.message}`;
}

/** The file a plugin directory's package.json names in `taskyard.tasks` (a module or a manifest). */
function tasksFileOf(dir: string): string {
  let tasks: unknown;
  try {
    tasks = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { taskyard?: { tasks?: unknown } }).taskyard?.tasks;
  } catch (err) {
    throw new UsageError(`${dir} is a directory but its package.json cannot be read (${(err as Error).message}): give the plugin directory, its task module or its manifest`);
  }
  if (typeof tasks !== 'string') throw new UsageError(`${join(dir, 'package.json')} has no "taskyard": {"tasks": "<module or manifest>"}`);
  const file = resolve(dir, tasks);
  if (!existsSync(file)) throw new UsageError(`${tasks}, named by taskyard.tasks in ${join(dir, 'package.json')}, does not exist${isManifestFile(file) ? '' : ' (build the plugin first)'}`);
  return file;
}

/**
 * The Task definitions of a plugin, checked as the service checks them: `path` is its directory,
 * its task module, or its manifest of command Tasks (taskyard.yaml).
 */
export async function loadTaskModule(path: string): Promise<{ file: string; definitions: DefinitionFields[] }> {
  const given = resolve(path);
  if (!existsSync(given)) throw new UsageError(`${path} does not exist`);
  const file = statSync(given).isDirectory() ? tasksFileOf(given) : given;
  if (isManifestFile(file)) {
    try {
      return { file, definitions: await readManifest(file) };
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(loadProblem(file, err as Error));
  }
  try {
    return { file, definitions: definitionsOfModule(mod).map(normalizeTask) };
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
}

/** The definition of `--task NAME`; a module with one Task needs no name. */
export function pickDefinition<D extends DefinitionFields>(definitions: readonly D[], name: string | undefined): D {
  const names = definitions.map((d) => d.name).join(', ') || '(none)';
  if (name === undefined) {
    if (definitions.length === 1) return definitions[0]!;
    throw new UsageError(`name the Task to run with --task; the module defines: ${names}`);
  }
  const found = definitions.find((d) => d.name === name);
  if (!found) throw new UsageError(`the module defines no Task ${JSON.stringify(name)}; it defines: ${names}`);
  return found;
}
