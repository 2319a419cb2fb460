/**
 * Describes the Task definitions of installed plugins, in a child process so plugin code never
 * runs inside the service. Usage: `node describe.js <plugins-dir>`; prints `DESCRIBE_MARKER` and
 * one JSON document `{definitions, errors}` last on stdout (plugin code may print before it). A plugin is a package under `<plugins-dir>/node_modules`
 * whose package.json has `"taskyard": {"tasks": "./tasks.js"}`.
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative, resolve, sep, isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DESCRIBE_MARKER, definitionsOfModule, normalizeTask, type TaskResources } from './task-sdk.js';
import { becomeRunAsUser } from './run-as.js';

interface Described {
  name: string;
  task_type: string;
  description: string;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  resources: TaskResources;
  plugin: string;
  module: string;
}

/** Package directories under node_modules, scoped ones included. */
function packageDirs(modules: string): string[] {
  const out: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(modules);
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    if (name.startsWith('.') || name === 'taskyard') continue;
    if (name.startsWith('@')) {
      for (const inner of readdirSync(join(modules, name)).sort()) out.push(join(modules, name, inner));
    } else out.push(join(modules, name));
  }
  return out;
}

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

async function describe(pluginsDir: string): Promise<{ definitions: Described[]; errors: string[] }> {
  const definitions: Described[] = [];
  const errors: string[] = [];
  for (const dir of packageDirs(join(pluginsDir, 'node_modules'))) {
    try {
      const found = taskModuleOf(dir);
      if (!found) continue;
      const mod = (await import(pathToFileURL(found.module).href)) as Record<string, unknown>;
      for (const candidate of definitionsOfModule(mod)) {
        try {
          const def = normalizeTask(candidate);
          definitions.push({ name: def.name, task_type: def.task_type, description: def.description, input_schema: def.input_schema, output_schema: def.output_schema, resources: def.resources, ...found });
        } catch (err) {
          errors.push(`plugin ${found.plugin}: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      errors.push(`plugin at ${dir}: ${(err as Error).message}`);
    }
  }
  return { definitions, errors };
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: describe.js <plugins-dir>\n');
  process.exit(2);
}
// Plugin code loads below: with `service.run_as` it runs as that user, as in a runner.
becomeRunAsUser();
process.stdout.write(`\n${DESCRIBE_MARKER}${JSON.stringify(await describe(dir))}`);
