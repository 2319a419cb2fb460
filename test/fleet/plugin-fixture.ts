import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { create as createTar } from 'tar';
import type { Test } from 'tap';
import type { TestService } from '../helpers/service.js';

const run = promisify(execFile);

export interface FixturePlugin {
  name: string;
  version: string;
  /** Source of the task module (`tasks.js`); plugins import the SDK as `taskyard/task`. */
  tasksJs: string;
  /** The `taskyard` field of package.json; null leaves it out. Default `{tasks: './tasks.js'}`. */
  taskyard?: Record<string, unknown> | null;
}

/** A greeting Task whose answer names the plugin version, so upgrades are visible. */
export function greetTasks(version: string, extra = ''): string {
  return `import { defineTask } from 'taskyard/task';
export default [
  defineTask({
    name: 'greet',
    taskType: 'greetings',
    description: 'Greets someone by name; the message names the plugin version.',
    input: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
    output: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    run: async (input) => ({ message: 'hello ' + input.who + ' from ${version}' }),
  }),
  ${extra}
];
`;
}

/** A Task that runs until cancelled (for "refused while running"). */
export const LINGER_TASK = `defineTask({
    name: 'linger',
    taskType: 'greetings',
    description: 'Waits a long time, so a test can find it running.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    run: () => new Promise((resolve) => setTimeout(() => resolve({}), 600000)),
  }),`;

/**
 * Writes the package and packs it: with the real `npm pack`, or (`quick`, for the many broken
 * variants) with `tar` in-process into the same layout (`package/...` in a .tgz). Returns its path.
 */
export async function packPlugin(t: Test, plugin: FixturePlugin, quick = false): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-plugin-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const src = join(dir, 'package');
  await mkdir(src);
  const taskyard = plugin.taskyard === undefined ? { tasks: './tasks.js' } : plugin.taskyard;
  const manifest = { name: plugin.name, version: plugin.version, type: 'module', ...(taskyard ? { taskyard } : {}) };
  await writeFile(join(src, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(join(src, 'tasks.js'), plugin.tasksJs);
  if (quick) {
    const file = join(dir, `${plugin.name}-${plugin.version}.tgz`);
    await createTar({ gzip: true, portable: true, cwd: dir, file }, ['package']);
    return file;
  }
  const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--loglevel=error'], { cwd: src });
  return join(dir, stdout.trim().split('\n').at(-1)!);
}

/** `POST /files` of a local file; answers the FileCopy. */
export async function upload(svc: TestService, file: string, name = 'plugin.tgz'): Promise<{ path: string; sha256: string; size: number }> {
  const res = await svc.fetch('/files', { method: 'POST', headers: { 'x-file-name': name, 'content-type': 'application/octet-stream' }, body: await readFile(file) });
  const body = (await res.json()) as { answer: { path: string; sha256: string; size: number } };
  if (res.status !== 200) throw new Error(`upload failed: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body.answer;
}
