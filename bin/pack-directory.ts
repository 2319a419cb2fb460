import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isManifestFile } from '../runner/command-tasks.js';
import { runNpm } from '../supervisor/plugins/run-npm.js';
import { UsageError } from './cli-errors.js';

/** Whether a path is a directory (a package to pack) rather than a tarball. */
export async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

/**
 * Packs a plugin's package directory with `npm pack` into `into`, after checking what would make
 * the installed plugin fail: a package.json with `taskyard.tasks`, and that module built (or that
 * manifest there: a plugin of command Tasks has no build). npm runs without lifecycle scripts (as
 * the service runs it), so a TypeScript plugin is built beforehand.
 */
export async function packDirectory(dir: string, into: string): Promise<string> {
  const manifestText = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (manifestText === undefined) throw new UsageError(`${dir} has no package.json: a plugin is an npm package (see \`taskyard plugin init\`)`);
  let manifest: { taskyard?: { tasks?: unknown } };
  try {
    manifest = JSON.parse(manifestText) as typeof manifest;
  } catch (err) {
    throw new UsageError(`${join(dir, 'package.json')} is not valid JSON: ${(err as Error).message}`);
  }
  const tasks = manifest.taskyard?.tasks;
  if (typeof tasks !== 'string') throw new UsageError(`${join(dir, 'package.json')} has no "taskyard": {"tasks": "<module or manifest>"}: the service would not know where the Tasks are declared`);
  if (/\.[cm]?ts$/.test(tasks)) throw new UsageError(`taskyard.tasks of ${dir} names ${tasks}, a TypeScript file Node does not run: point it at the compiled .js (e.g. ./dist/tasks.js) and build`);
  if (!(await stat(resolve(dir, tasks)).then((s) => s.isFile(), () => false))) {
    if (isManifestFile(tasks)) throw new UsageError(`the manifest ${tasks} that taskyard.tasks of ${dir} names does not exist`);
    throw new UsageError(`the task module ${tasks} of ${dir} does not exist yet: build the plugin first (\`npm run build\` in ${dir})`);
  }
  await runNpm(['pack', resolve(dir), '--pack-destination', into], into, new AbortController().signal);
  const packed = (await readdir(into)).find((name) => name.endsWith('.tgz'));
  if (!packed) throw new UsageError(`npm pack of ${dir} made no tarball`);
  return join(into, packed);
}
