import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { create as createTar } from 'tar';
import { startTestService, type TestService } from '../helpers/service.js';
import { runCli } from '../helpers/run-cli.js';
import type { TaskStatus } from '../../schemas/tasks.js';

/**
 * Plugins whose Tasks are Python scripts declared in a manifest (taskyard.yaml): the `--python`
 * scaffold from `plugin init` to a succeeded run (by hand, `task run`, installed in the service),
 * inputs checked before the process starts and outputs when it ends, and manifest errors that
 * name the plugin and the problem while the service keeps running. Real python3, real service.
 */
const run = promisify(execFile);
const root = await mkdtemp(join(tmpdir(), 'taskyard-python-plugin-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

const cliIn = (svc: TestService | null, cwd: string) => (args: string[]) =>
  runCli(args, { HOME: root, TMPDIR: root, ...(svc ? { TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' } : {}) }, { cwd });

const readJson = async <T = Record<string, unknown>>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;
const metricLines = (dir: string) => readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string; value: number; step?: number });

async function waitDone(svc: TestService, taskId: string, runId: string): Promise<TaskStatus> {
  return (await svc.call('wait_task', { task_id: taskId, run_id: runId })).body.answer;
}

t.test('plugin init --python: runs by hand, with task run, and installed in the service', async (t) => {
  const svc = await startTestService(t);
  const cli = cliIn(svc, root);
  const init = await cli(['plugin', 'init', 'toy-train', '--python']);
  t.equal(init.code, 0, init.stderr);
  const plugin = join(root, 'toy-train');
  t.same((await readJson(join(plugin, 'package.json')))['taskyard'], { tasks: './taskyard.yaml' }, 'a manifest, no build step');
  t.match(await readFile(join(plugin, 'taskyard.yaml'), 'utf8'), /command: \[python3, "\{plugin_dir\}\/train\.py"\]/);

  // By hand: no taskyard around (no PYTHONPATH, no channel), the helper prints what it reports.
  const byHand = await run('python3', ['train.py'], { cwd: plugin, env: { PATH: process.env['PATH'] ?? '' } });
  t.match(byHand.stdout, /\[taskyard\] \{"type":"step_start","name":"train"\}/);
  t.match(byHand.stdout, /\[taskyard\] \{"type":"metric","name":"loss","value":[\d.]+,"step":2\}/);
  t.match(byHand.stdout, /\[taskyard\] \{"type":"artifact","name":"model","path":"model.json"\}/);
  t.match(byHand.stdout, /\[taskyard\] \{"type":"output","values":\{"final_loss":[\d.]+\}\}/);
  t.match(byHand.stdout, /epoch 3\/3: loss/);

  // Locally as a Task: the plugin directory names its manifest.
  const workspace = join(root, 'local');
  const local = await cliIn(null, plugin)(['task', 'run', '.', '--epochs', '4', '--task-name', 'here', '--workspace', workspace]);
  t.equal(local.code, 0, local.stdout + local.stderr);
  t.match(local.stdout, /epoch 4\/4: loss/);
  t.match(local.stdout, /"final_loss": [\d.]+/);
  t.match(local.stdout, /model: .*model\.json \(\d+ bytes, sha256 [0-9a-f]{64}\)/);
  t.match(local.stdout, /toy-train#train#here {2}succeeded/);
  const localDir = join(workspace, 'toy-train', 'toy-train#train#here');
  const localStatus = await readJson<TaskStatus>(join(localDir, 'status.json'));
  t.match(localStatus, { state: 'succeeded', config: { epochs: 4, lr: 0.5 }, steps: [{ name: 'train', percentage: 100 }, { name: 'save' }] });
  t.same(metricLines(localDir).map((m) => [m.name, m.step]), [['loss', 0], ['loss', 1], ['loss', 2], ['loss', 3]], 'a metric point per epoch');
  const help = await cliIn(null, plugin)(['task', 'run', 'taskyard.yaml', '--help']);
  t.match(help.stdout, /--epochs <integer>\s+\(default 3, >= 1\)\s+Passes over the data/, 'the manifest file itself runs too');

  // Installed as it is, described, submitted with typed inputs.
  const install = await cli(['plugin', 'install', plugin]);
  t.equal(install.code, 0, install.stdout + install.stderr);
  t.match(install.stdout, /"name": "toy-train"[\s\S]*"train"/);
  const defs = (await svc.call('list_installed_task_definitions')).body.answer;
  t.match(defs.find((d) => d.name === 'train'), { source: 'plugin', plugin: 'toy-train', task_type: 'toy-train', input_schema: { properties: { epochs: { default: 3 } } } });
  const handle = (await svc.call('submit', { task: 'train', epochs: 2, lr: 0.25 })).body.answer;
  const done = await waitDone(svc, handle.task_id, handle.run_id);
  t.equal(done.state, 'succeeded', done.error);
  const result = done.result as { final_loss: number; artifacts: Record<string, { path: string; size: number }> };
  t.type(result.final_loss, 'number');
  t.match(result.artifacts['model'], { path: 'model.json' });
  const dir = join(svc.workspace, 'toy-train', handle.task_id);
  t.same(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).epochs, 2, 'the typed inputs reached the script');
  t.same(metricLines(dir).length, 2);
  t.match(readFileSync(join(dir, 'task.log'), 'utf8'), /epoch 2\/2: loss/);
  t.notOk(existsSync(join(svc.workspace, '.taskyard', 'plugins', 'node_modules', 'toy-train', 'taskyard_task.py')), 'the link for runs by hand is not packed');
});

/** A manifest plugin written straight into the service's plugin prefix, as install_plugin leaves it. */
async function writeManifestPlugins(workspace: string, plugins: Record<string, { manifest: string; files?: Record<string, string> }>): Promise<void> {
  const prefix = join(workspace, '.taskyard', 'plugins');
  for (const [name, { manifest, files = {} }] of Object.entries(plugins)) {
    const dir = join(prefix, 'node_modules', name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', taskyard: { tasks: './taskyard.yaml' } }));
    await writeFile(join(dir, 'taskyard.yaml'), manifest);
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  }
  const dependencies = Object.fromEntries(Object.keys(plugins).map((n) => [n, '1.0.0']));
  await writeFile(join(prefix, 'package.json'), JSON.stringify({ private: true, dependencies }));
  // The lockfile as npm writes it: a flat tree, so later installs into this prefix need no npm run.
  const packages = Object.fromEntries(Object.keys(plugins).map((n) => [`node_modules/${n}`, { version: '1.0.0' }]));
  await writeFile(join(prefix, 'package-lock.json'), JSON.stringify({ name: 'plugins', lockfileVersion: 3, requires: true, packages: { '': { dependencies }, ...packages } }));
}

/** Records that it started (a file named after its Task in the workspace), then reports `final_loss` as told. */
const CHECKED_PY = `import os, sys
import taskyard_task as tt
open(os.path.join(os.environ["TASKYARD_WORKSPACE"], "started-" + tt.inputs()["task_name"]), "w").close()
value = {"number": 0.9, "string": "0.9", "enum": 0.9, "none": None}[sys.argv[1]]
if value is not None:
    tt.output(final_loss=value, mode="c" if sys.argv[1] == "enum" else "fast")
`;
const checkedTask = (name: string, reports: string) => `
  - name: ${name}
    task_type: checked
    description: Records that it started, then reports its output as ${reports}.
    input: {type: object, properties: {epochs: {type: integer, minimum: 1}}, required: [epochs]}
    output: {type: object, properties: {final_loss: {type: number}, mode: {enum: [fast, slow]}}, required: [final_loss]}
    command: [python3, "{plugin_dir}/checked.py", ${reports}]`;

t.test('inputs are checked before the process starts, outputs when it ends', async (t) => {
  const workspace = await mkdtemp(join(root, 'ws-'));
  const manifest = `tasks:${checkedTask('good', 'number')}${checkedTask('as-string', 'string')}${checkedTask('no-output', 'none')}${checkedTask('off-enum', 'enum')}\n`;
  await writeManifestPlugins(workspace, { checked: { manifest, files: { 'checked.py': CHECKED_PY } } });
  const svc = await startTestService(t, { workspace });
  const started = (name: string) => existsSync(join(workspace, `started-${name}`));

  for (const [label, args] of [
    ['epochs below the minimum', { epochs: 0 }],
    ['epochs of the wrong type', { epochs: 'three' }],
    ['a required input missing', {}],
    ['an undeclared input', { epochs: 1, batch: 4 }],
  ] as const) {
    const answer = (await svc.call('submit', { task: 'good', task_name: 'refused', ...args })).body;
    t.equal(answer.success, false, `${label}: refused`);
    t.match(answer.answer, /^ValidationError: invalid input for task good: /, label);
  }
  t.notOk(started('refused'), 'no refused submit started the script');
  t.notOk(existsSync(join(workspace, 'checked')), 'nor wrote a record');
  const local = await cliIn(null, root)(['task', 'run', join(svc.workspace, '.taskyard', 'plugins', 'node_modules', 'checked'), '--task', 'good', '--epochs', '0', '--task-name', 'refused', '--workspace', workspace]);
  t.equal(local.code, 2);
  t.match(local.stderr, /invalid input for task good: epochs: must be >= 1/);
  t.notOk(started('refused'), 'nor did task run');

  const outcomes: Record<string, TaskStatus> = {};
  for (const name of ['good', 'as-string', 'no-output', 'off-enum']) {
    const handle = (await svc.call('submit', { task: name, task_name: name, epochs: 1 })).body.answer;
    outcomes[name] = await waitDone(svc, handle.task_id, handle.run_id);
    t.ok(started(name), `${name} started`);
  }
  t.match(outcomes['good'], { state: 'succeeded', result: { final_loss: 0.9, mode: 'fast' } });
  t.match(outcomes['as-string'], { state: 'failed', exit_code: 1, error: 'ValueError: output field final_loss must be of type "number", got "0.9"' });
  t.match(outcomes['no-output'], { state: 'failed', error: 'ValueError: output field(s) missing: final_loss' });
  t.match(outcomes['off-enum'], { state: 'failed', error: 'ValueError: output field mode must be one of ["fast","slow"], got "c"' });
});

t.test('manifest errors name the plugin and the problem; the service keeps running', async (t) => {
  const workspace = await mkdtemp(join(root, 'ws-'));
  const good = `tasks:\n  - name: fine\n    task_type: fine\n    description: Prints a line and succeeds.\n    input: {type: object, properties: {}}\n    output: {type: object, properties: {}}\n    command: [python3, -c, "print('fine')"]\n`;
  const task = (name: string) => good.replaceAll('fine', name);
  // One installed manifest broken in place (edited after install): the listing names it, the rest works.
  await writeManifestPlugins(workspace, { 'fine-plugin': { manifest: good }, 'broken-plugin': { manifest: task('broken').replace('-c, ', '"{nope}", ') } });
  const svc = await startTestService(t, { workspace });
  const listing = (await svc.call('list_installed_task_definitions')).body;
  t.equal(listing.success, false);
  t.match(listing.answer, /^ValueError: invalid task definitions: plugin broken-plugin: Task 'broken': command\[1\]: unknown placeholder \{nope\}; use \{plugin_dir\}/);
  const cli = cliIn(svc, root);
  const cases = {
    'bad-placeholder': [task('placeholder').replace('-c, ', '"{plugin_root}", '), /plugin bad-placeholder cannot be installed: plugin bad-placeholder: Task 'placeholder': command\[1\]: unknown placeholder \{plugin_root\}; use \{plugin_dir\}, \{task_dir\}, \{workspace\}, \{inputs_file\}/],
    // A missing command and a manifest that does not parse reach the same refusal: their texts are
    // checked where the manifest is read (test/tasks/manifest-tasks.test.ts), one install less each.
    'bad-empty': ['tasks: []\n', /plugin bad-empty declares no Tasks \(its manifest \.\/taskyard\.yaml lists none\)/],
    'new-plugin': [task('new'), /"name": "new-plugin"/],
  } as const;
  for (const [name, [manifest, outcome]] of Object.entries(cases)) {
    const dir = join(root, name, 'package');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', taskyard: { tasks: './taskyard.yaml' } }));
    await writeFile(join(dir, 'taskyard.yaml'), manifest);
    if (name === 'bad-placeholder') {
      const local = await cliIn(null, dir)(['task', 'run', '.']);
      t.equal(local.code, 2, 'task run refuses it too');
      t.match(local.stderr, /^taskyard task: Task 'placeholder': command\[1\]: unknown placeholder \{plugin_root\}/);
    }
    // Installed as the tarball npm pack makes of that directory (package/...), packed in process:
    // the refusals are the service's; a directory packed by the CLI is the first test's case.
    const tarball = join(root, name, `${name}-1.0.0.tgz`);
    await createTar({ gzip: true, portable: true, cwd: join(root, name), file: tarball }, ['package']);
    const install = await cli(['plugin', 'install', tarball]);
    t.equal(install.code, name === 'new-plugin' ? 0 : 1, `${name}: ${install.stdout}${install.stderr}`);
    t.match(install.stdout, outcome, `${name}: says why`);
    t.notMatch(install.stdout, /broken-plugin/, `${name}: the broken neighbour is not its problem`);
  }
  t.same((await svc.call('list_plugins')).body.answer.map((p) => p.name), ['broken-plugin', 'fine-plugin', 'new-plugin'], 'refused installs changed nothing; the broken neighbour did not hold back a good one');
  for (const name of ['fine', 'new']) {
    const handle = (await svc.call('submit', { task: name })).body.answer;
    t.equal((await waitDone(svc, handle.task_id, handle.run_id)).state, 'succeeded', `${name} runs`);
  }
});
