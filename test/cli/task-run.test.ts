import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../supervisor/build-info.js';
import { runCli } from '../helpers/run-cli.js';

/** A plugin directory whose module imports the SDK through node_modules/taskyard, as after `npm install`. */
const plugin = await mkdtemp(join(tmpdir(), 'taskyard-task-run-'));
t.teardown(() => rm(plugin, { recursive: true, force: true }));
await mkdir(join(plugin, 'node_modules'));
await symlink(PACKAGE_ROOT, join(plugin, 'node_modules', 'taskyard'), 'dir');
await writeFile(join(plugin, 'package.json'), JSON.stringify({ name: 'run-fixture', type: 'module' }));
await writeFile(
  join(plugin, 'tasks.js'),
  `import { writeFile } from 'node:fs/promises';
import { defineTask, TaskError } from 'taskyard/task';
export default [
  defineTask({
    name: 'double', taskType: 'maths', description: 'Doubles n and writes it to double.txt.',
    input: { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['n'] },
    output: { type: 'object', properties: { doubled: { type: 'integer' }, tags: { type: 'array' } } },
    async run(input, ctx) {
      return ctx.step('double', async () => {
        ctx.logger.info('doubling ' + input.n);
        ctx.progress(50);
        if (input.n < 0) throw new TaskError('ValueError', 'n must not be negative');
        await writeFile('double.txt', String(input.n * 2));
        await ctx.artifact('doubled', 'double.txt');
        return { doubled: input.n * 2, tags: input.tags ?? [] };
      });
    },
  }),
  defineTask({ name: 'other', taskType: 'maths', description: 'Does nothing.', input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} }, run: () => ({}) }),
];
`,
);
await writeFile(join(plugin, 'tasks.ts'), 'export default [];\n');

const cli = (args: string[]) => runCli(['task', 'run', ...args], { HOME: plugin }, { cwd: plugin });

t.test('runs a Task of a module without a service and prints status, log and artifacts', async (t) => {
  const workspace = join(plugin, 'ws-ok');
  const run = await cli(['tasks.js', '--task', 'double', '--n', '21', '--tags', 'a', '--tags', 'b', '--task-name', 'first', '--workspace', workspace]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, 'running maths#double#first');
  t.match(run.stdout, /INFO doubling 21/);
  t.match(run.stdout, /"doubled": 42/);
  t.match(run.stdout, /doubled: .*double\.txt \(2 bytes, sha256 [0-9a-f]{64}\)/);
  t.match(run.stdout, /maths#double#first {2}succeeded/);
  const dir = join(workspace, 'maths', 'maths#double#first');
  t.equal(await readFile(join(dir, 'double.txt'), 'utf8'), '42');
  const status = JSON.parse(await readFile(join(dir, 'status.json'), 'utf8')) as Record<string, unknown>;
  t.match(status, { state: 'succeeded', exit_code: 0, config: { n: 21, tags: ['a', 'b'], task_name: 'first', source_tasks: '' }, steps: [{ name: 'double', percentage: 50 }] });
  t.ok(JSON.parse(await readFile(join(dir, 'metadata.json'), 'utf8')), 'metadata written as by the service');
});

t.test('a failing Task exits 1 with its error', async (t) => {
  const run = await cli(['tasks.js', '--task', 'double', '--n', '-1', '--workspace', join(plugin, 'ws-fail')]);
  t.equal(run.code, 1);
  t.match(run.stdout, /failed in [\d.]+ s {2}· {2}exit code 1 {2}· {2}ValueError: n must not be negative/);
});

t.test('plugin init refuses a bad name or an existing directory', async (t) => {
  const bad = await runCli(['plugin', 'init', 'Bad Name'], { HOME: plugin }, { cwd: plugin });
  t.equal(bad.code, 2);
  t.match(bad.stderr, 'is not an npm package name');
  await mkdir(join(plugin, 'taken'));
  const taken = await runCli(['plugin', 'init', 'taken'], { HOME: plugin }, { cwd: plugin });
  t.equal(taken.code, 2);
  t.match(taken.stderr, 'already exists');
});

t.test('usage errors: TypeScript module, unknown Task, missing input, several Tasks', async (t) => {
  const ts = await cli(['tasks.ts']);
  t.equal(ts.code, 2);
  t.match(ts.stderr, /is TypeScript, which Node does not run: build the plugin/);
  const unknown = await cli(['tasks.js', '--task', 'triple']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, 'the module defines no Task "triple"; it defines: double, other');
  const missing = await cli(['tasks.js', '--task', 'double']);
  t.equal(missing.code, 2);
  t.match(missing.stderr, 'missing required --n');
  const which = await cli(['tasks.js', '--n', '1']);
  t.equal(which.code, 2);
  t.match(which.stderr, 'name the Task to run with --task');
  const help = await cli(['tasks.js', '--task', 'double', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /--n <integer>\s+\(required\)/);
  const absent = await cli(['nope.js']);
  t.equal(absent.code, 2);
  t.match(absent.stderr, 'nope.js does not exist');
});
