import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { definitionsOfModule, normalizeTask, type TaskDefinitionEntry } from '../runner/task-sdk.js';
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

/** The Task definitions a plugin module exports, checked as the service checks them. */
export async function loadTaskModule(path: string): Promise<{ file: string; definitions: TaskDefinitionEntry[] }> {
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`${path} does not exist`);
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
export function pickDefinition(definitions: readonly TaskDefinitionEntry[], name: string | undefined): TaskDefinitionEntry {
  const names = definitions.map((d) => d.name).join(', ') || '(none)';
  if (name === undefined) {
    if (definitions.length === 1) return definitions[0]!;
    throw new UsageError(`name the Task to run with --task; the module defines: ${names}`);
  }
  const found = definitions.find((d) => d.name === name);
  if (!found) throw new UsageError(`the module defines no Task ${JSON.stringify(name)}; it defines: ${names}`);
  return found;
}
