/**
 * Describes the Task definitions of installed plugins, in a child process so plugin code never
 * runs inside the service. Usage: `node describe.js <plugins-dir> [plugin ...]` (the installed
 * plugins, as the prefix's package.json lists them); prints `DESCRIBE_MARKER` and one JSON
 * document `{definitions, errors}` (DescribeAnswer, schemas/describe-answer.ts) last on stdout
 * (plugin code may print before it), then exits; before loading each plugin it prints
 * `DESCRIBE_LOADING<name>` on stderr. A plugin is a package under `<plugins-dir>/node_modules`
 * whose package.json has `"taskyard": {"tasks": "./tasks.js"}`, or names a manifest of command
 * Tasks there (`"./taskyard.yaml"`, `.yml` or `.json`; runner/command-tasks.ts).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { join, relative, resolve, sep, isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DESCRIBE_LOADING, DESCRIBE_MARKER, definitionsOfModule, normalizeTask, type DefinitionFields } from './task-sdk.js';
import { isManifestFile, readManifest } from './command-tasks.js';
import type { DescribeAnswer } from '../schemas/describe-answer.js';
import { becomeRunAsUser } from './run-as.js';

/** How long one plugin's module may take to load. */
const IMPORT_TIMEOUT_MS = 10_000;

/** The plugin's task module, which must stay inside its package. */
function taskModuleOf(dir: string): { plugin: string; module: string } | null {
  let manifest: { name?: unknown; taskyard?: { tasks?: unknown } };
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    return null;
  }
  const tasks = manifest.taskyard?.tasks;
  if (typeof tasks !== 'string') return null;
  const plugin = typeof manifest.name === 'string' ? manifest.name : dir;
  const root = realpathSync(dir);
  const module = realpathSync(resolve(root, tasks));
  const rel = relative(root, module);
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new Error(`plugin ${plugin}: taskyard.tasks points outside the package`);
  return { plugin, module };
}

/**
 * Imports a plugin's task module, or fails naming the time it was given: a module whose top-level
 * await never settles must not hold the description of every other plugin.
 */
async function importModule(module: string): Promise<Record<string, unknown>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`its module did not finish loading within ${IMPORT_TIMEOUT_MS / 1000} s`)), IMPORT_TIMEOUT_MS);
  });
  try {
    return (await Promise.race([import(pathToFileURL(module).href), late])) as Record<string, unknown>;
  } finally {
    clearTimeout(timer);
  }
}

async function describe(pluginsDir: string, plugins: readonly string[]): Promise<DescribeAnswer> {
  const definitions: DescribeAnswer['definitions'] = [];
  const errors: string[] = [];
  for (const name of plugins) {
    let plugin = name;
    try {
      const found = taskModuleOf(join(pluginsDir, 'node_modules', ...name.split('/')));
      if (!found) continue;
      plugin = found.plugin;
      // Said before the plugin's code runs: if it takes this process down, the parent knows whose it was.
      process.stderr.write(`\n${DESCRIBE_LOADING}${name}\n`);
      const declared: (() => DefinitionFields)[] = isManifestFile(found.module)
        ? (await readManifest(found.module)).map((def) => () => def)
        : definitionsOfModule(await importModule(found.module)).map((candidate) => () => normalizeTask(candidate));
      for (const definition of declared) {
        try {
          const def = definition();
          const { name, task_type, description, input_schema, output_schema, resources, retries, cache } = def;
          definitions.push({ name, task_type, description, input_schema, output_schema, resources, ...(retries && { retries }), ...(cache !== undefined && { cache }), ...found });
        } catch (err) {
          errors.push(`plugin ${found.plugin}: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      errors.push(`plugin ${plugin}: ${(err as Error).message}`);
    }
  }
  return { definitions, errors };
}

const [dir, ...plugins] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: describe.js <plugins-dir> [plugin ...]\n');
  process.exit(2);
}
// Plugin code loads below: with `service.run_as` it runs as that user, as in a runner.
becomeRunAsUser();
const answer = `\n${DESCRIBE_MARKER}${JSON.stringify(await describe(dir, plugins))}`;
// Plugin code may leave timers or sockets open (a library's top-level setInterval): the answer is
// all this process is for, so it ends once the answer is written.
process.stdout.write(answer, () => process.exit(0));
