import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { commandTask, manifestTask, readManifest } from '../../runner/command-tasks.js';

const place = { workspace: '/ws', dir: '/ws/train/train#fit#a', inputsFile: '/ws/train/train#fit#a/inputs.json' };
const base = { name: 'fit', task_type: 'train', description: 'Fits a line and reports its loss.', command: ['python3', '{plugin_dir}/fit.py'] };

t.test('a manifest Task: placeholders filled, braces escaped, inputs as variables, schemas default to no fields', async (t) => {
  const def = manifestTask({ ...base, command: ['python3', '{plugin_dir}/fit.py', '--out={task_dir}/m', '{{literal}}', '{inputs_file}'], env: { WS: '{workspace}' } }, '/plugins/toy');
  t.same(def.input_schema, { type: 'object', properties: {} });
  t.same(def.output_schema, { type: 'object', properties: {} });
  const spec = def.command({ lr: 0.1, verbose: true, tags: ['a'], 'max-len': 'x' }, place);
  t.same(spec.argv, ['python3', '/plugins/toy/fit.py', `--out=${place.dir}/m`, '{literal}', place.inputsFile]);
  t.equal(spec.cwd, place.dir, 'it runs in the Task directory');
  t.same(spec.env, { TASKYARD_INPUT_LR: '0.1', TASKYARD_INPUT_VERBOSE: 'true', TASKYARD_INPUT_MAX_LEN: 'x', WS: '/ws' }, 'scalar inputs as variables (arrays are in the inputs file only)');
  const typed = manifestTask({ ...base, input_schema: { type: 'object', properties: { lr: { type: 'number' } } } }, '/p');
  t.same(Object.keys(typed.input_schema['properties'] as object), ['lr'], 'input_schema is read as input');
});

t.test('a manifest Task that cannot run is refused with the reason', async (t) => {
  t.throws(() => manifestTask({ ...base, command: ['python3', '{plugin}/fit.py'] }, '/p'), /Task 'fit': command\[1\]: unknown placeholder \{plugin\}; use \{plugin_dir\}/);
  t.throws(() => manifestTask({ ...base, command: [] }, '/p'), /command must be a non-empty array of strings/);
  t.throws(() => manifestTask({ ...base, command: 'python3 fit.py' }, '/p'), /command must be a non-empty array/);
  t.throws(() => manifestTask({ ...base, command: ['python3', 3] }, '/p'), /command\[1\] must be a string/);
  t.throws(() => manifestTask({ ...base, name: 'bad name' }, '/p'), /Task name "bad name" is invalid/);
  t.throws(() => manifestTask({ ...base, env: { TASKYARD_RUN_ID: 'x' } }, '/p').command({}, place), /env: TASKYARD_RUN_ID is set by taskyard/);
});

t.test('the command Task: argv as given, cwd inside the workspace only, env checked', async (t) => {
  const spec = commandTask.command({ argv: ['echo', 'a b'], env: { A: '1' } }, place);
  t.same(spec, { argv: ['echo', 'a b'], cwd: place.dir, env: { A: '1' } });
  t.throws(() => commandTask.command({ argv: ['true'], cwd: '/etc' }, place), /cwd must be a path relative to the workspace/);
  t.throws(() => commandTask.command({ argv: ['true'], env: { 'A-B': '1' } }, place), /"A-B" is not a variable name/);
  t.throws(() => commandTask.command({ argv: [''] }, place), /argv must be a non-empty array of strings whose first is the program/);
});

t.test('a manifest file: YAML or JSON; one that does not parse or lists no tasks says so in one line', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-manifest-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const write = async (name: string, text: string) => {
    await writeFile(join(dir, name), text);
    return join(dir, name);
  };
  const yaml = await readManifest(await write('ok.yaml', 'tasks:\n  - name: fit\n    task_type: train\n    description: Fits a line and reports its loss.\n    command: [python3, "{plugin_dir}/fit.py"]\n'));
  t.same(yaml.map((d) => [d.name, d.command({}, place).argv]), [['fit', ['python3', `${dir}/fit.py`]]], '{plugin_dir} is the manifest directory');
  const json = await readManifest(await write('ok.json', JSON.stringify({ tasks: [base] })));
  t.same(json.map((d) => d.name), ['fit']);
  const bad = await write('bad.yaml', 'tasks:\n  - name: x\n   command: [\n');
  await t.rejects(readManifest(bad), { message: new RegExp(`^the manifest ${bad} could not be parsed: [^\\n]+$`) });
  await t.rejects(readManifest(await write('none.yaml', 'name: x\n')), { message: /must have a list under "tasks"/ });
});
