import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { TestService } from '../helpers/service.js';
import { makeWorkspace, startTaskService, submitOk, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';

/** A training-like script: two steps, progress, a metric per epoch, two artifacts, an output. */
const TRAIN = `
import json, os, taskyard_task as tt
print("training starts", flush=True)
args = tt.inputs()
with tt.step("load"):
    tt.progress(50)
    tt.log("loaded 3 batches")
    tt.progress(100)

@tt.step("train")
def train(epochs):
    for epoch in range(epochs):
        tt.metric("loss", 1.0 / (epoch + 1), step=epoch)
        tt.metric("accuracy", epoch / epochs, step=epoch)
        tt.progress((epoch + 1) * 100 / epochs)
    return 1.0 / epochs

final = train(4)
with open(os.path.join(tt.task_dir(), "model.txt"), "w") as f:
    f.write("weights")
os.makedirs(os.path.join(tt.task_dir(), "plots"), exist_ok=True)
with open(os.path.join(tt.task_dir(), "plots", "loss.csv"), "w") as f:
    f.write("epoch,loss\\n0,1.0\\n")
tt.artifact("model", "model.txt")
tt.artifact("curve", os.path.join(tt.task_dir(), "plots", "loss.csv"))
tt.output({"final_loss": final, "argv_seen": len(args["argv"])})
`;

/** Fails mid-step with a Python exception. */
const RAISES = `
import taskyard_task as tt
with tt.step("validate"):
    raise ValueError("lr must be positive")
`;

async function writeScript(workspace: string, name: string, text: string): Promise<string> {
  await mkdir(join(workspace, 'scripts'), { recursive: true });
  const file = join(workspace, 'scripts', name);
  await writeFile(file, text);
  return file;
}

function taskDir(workspace: string, handle: Handle): string {
  return join(workspace, 'command', handle.task_id);
}

async function runCommand(svc: TestService, argv: string[], extra: Record<string, unknown> = {}): Promise<{ handle: Handle; status: Awaited<ReturnType<typeof waitTask>>['status'] }> {
  const handle = (await svc.call('submit', { task: 'command', argv, ...extra })).body.answer;
  const { status } = await waitTask(svc, handle);
  return { handle, status };
}

// One service for the command tests: each runs Tasks and scripts of its own (distinct names).
const shared = startTaskService(t);

t.test('a Python training-like Task reports steps, progress, metrics, two artifacts and its output', async (t) => {
  const svc = await shared;
  const workspace = svc.workspace;
  const script = await writeScript(workspace, 'train.py', TRAIN);
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', script], task_name: 'train-1' });
  const stream = await svc.events('stream_task', { task_id: handle.task_id });
  const { status } = await waitTask(svc, handle);

  t.equal(status.state, 'succeeded', status.error);
  t.same(status.steps.map((s) => [s.name, s.percentage, s.finished_at !== null]), [['load', 100, true], ['train', 100, true]], 'both steps, finished, at 100%');
  const dir = taskDir(workspace, handle);
  const sha = (file: string) => readFile(join(dir, file)).then((b) => createHash('sha256').update(b).digest('hex'));
  t.same(status.result, {
    final_loss: 0.25,
    argv_seen: 2,
    exit_code: 0,
    artifacts: {
      model: { path: 'model.txt', size: 7, sha256: await sha('model.txt') },
      curve: { path: 'plots/loss.csv', size: 17, sha256: await sha('plots/loss.csv') },
    },
  }, 'the output: reported fields, the exit code and both artifacts with their checksums');

  const metadata = JSON.parse(await readFile(join(dir, 'metadata.json'), 'utf8')) as { output_params: unknown; input_params: { argv: string[] } };
  t.same(metadata.output_params, status.result, 'metadata.json holds the same output');
  t.same(metadata.input_params.argv, ['python3', script]);

  const events = (await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { kind: string; name: string; percentage: number | null });
  t.ok(events.every((e) => e.kind === 'progress'), 'events.jsonl holds progress records only');
  t.same([...new Set(events.map((e) => e.name))], ['load', 'train'], 'events.jsonl records both steps');
  t.ok(events.some((e) => e.name === 'train' && e.percentage === 100), 'and the last percentage');

  const points = (await readFile(join(dir, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { name: string; value: number; step: number; timestamp: string });
  t.same(points.filter((p) => p.name === 'loss').map((p) => [p.step, p.value]), [[0, 1], [1, 0.5], [2, 1 / 3], [3, 0.25]], 'metrics.jsonl: the loss series by step');
  t.equal(points.filter((p) => p.name === 'accuracy').length, 4);
  t.ok(points.every((p) => !Number.isNaN(Date.parse(p.timestamp))), 'every point has its timestamp');

  const log = (await svc.call('read_task_log', { task_id: handle.task_id, offset: 0 })).body.answer.content;
  t.match(log, /training starts/, 'what the script printed is in task.log');
  t.match(log, /INFO loaded 3 batches/, 'and its log report, as a timestamped line');

  t.equal(stream.status, 200);
  const progress = stream.events.filter((e) => e['kind'] === 'progress').map((e) => e['name']);
  t.ok(progress.includes('load') && progress.includes('train'), `stream_task shows both steps (${progress.join(',')})`);
  t.equal(stream.result?.success, true, 'stream_task ends with the successful status');
  t.same((stream.result?.answer as { result?: unknown } | undefined)?.result, status.result);
});

t.test('lineage: a command Task derives from another through source_tasks and reads its files', async (t) => {
  const svc = await shared;
  const first = await runCommand(svc, ['sh', '-c', 'echo weights > model.txt; echo \'{"type":"artifact","name":"model","path":"model.txt"}\' >&3'], { task_name: 'make-model' });
  t.equal(first.status.state, 'succeeded', first.status.error);
  const read = 'import taskyard_task as tt; src = tt.inputs()["source_tasks"]; tt.output(model=open(tt.source_task_dir(src) + "/model.txt").read().strip())';
  const second = await runCommand(svc, ['python3', '-c', read], { source_tasks: first.handle.task_id });
  t.equal(second.status.state, 'succeeded', second.status.error);
  t.equal((second.status.result as { model?: string }).model, 'weights', 'source_task_dir finds the source Task');
  const graph = (await svc.call('get_task_graph', { task_id: second.handle.task_id })).body.answer;
  t.same(graph.nodes.find((n) => n.task_id === second.handle.task_id)?.parent_ids, [first.handle.task_id], 'get_task_graph shows the lineage');
});

t.test('a Python exception fails the Task with its type and message; the traceback is in task.log', async (t) => {
  const svc = await shared;
  const workspace = svc.workspace;
  const { handle, status } = await runCommand(svc, ['python3', await writeScript(workspace, 'raises.py', RAISES)]);
  t.equal(status.state, 'failed');
  t.equal(status.error, 'ValueError: lr must be positive');
  t.equal(status.exit_code, 1);
  t.same(status.steps.map((s) => [s.name, s.finished_at !== null]), [['validate', true]], 'the step it failed in is closed');
  const log = (await svc.call('read_task_log', { task_id: handle.task_id, offset: 0 })).body.answer.content;
  t.match(log, /Traceback \(most recent call last\):[\s\S]*raise ValueError\("lr must be positive"\)/, 'the traceback');
});

t.test('exit codes, a missing program, and the last stderr line', async (t) => {
  const svc = await shared;
  const cases: Array<[string[], string, number]> = [
    [['sh', '-c', 'echo some output; echo "disk quota exceeded" >&2; exit 3'], 'CommandError: the command exited with code 3: disk quota exceeded', 3],
    [['no-such-program-xyz'], 'FileNotFoundError: command not found: no-such-program-xyz', 127],
    [['sh', '-c', 'kill -SEGV $$'], 'CommandError: the command was killed by SIGSEGV', 139],
    // A script that never imported taskyard_task: its traceback's last line is the error.
    [['python3', '-c', 'import json\njson.loads("{}")["lr"]'], "KeyError: 'lr'", 1],
  ];
  for (const [argv, error, code] of cases) {
    const { status } = await runCommand(svc, argv);
    t.same([status.state, status.error, status.exit_code], ['failed', error, code], argv.join(' '));
  }
  const ok = await runCommand(svc, ['true']);
  t.same([ok.status.state, ok.status.result], ['succeeded', { exit_code: 0, artifacts: {} }], '`true` succeeds with exit_code 0');
});

t.test('a shell script reports progress by writing protocol lines with echo; bad lines are logged, not fatal', async (t) => {
  const svc = await shared;
  const workspace = svc.workspace;
  const script = await writeScript(workspace, 'steps.sh', [
    'echo \'{"type":"step_start","name":"fetch"}\' >&3',
    'for p in 25 50 100; do echo "{\\"type\\":\\"progress\\",\\"percentage\\":$p}" >&3; done',
    'echo \'{"type":"step_end"}\' >&3',
    'echo \'this is not protocol\' >&3',
    'echo \'{"type":"progress","percentage":250}\' >&3',
    'echo "{\\"type\\":\\"output\\",\\"values\\":{\\"rows\\":$ROWS}}" >&3',
    'echo "inputs file: $(head -c 1 "$TASKYARD_INPUTS")"',
    '',
  ].join('\n'));
  const run = await runCommand(svc, ['sh', script], { env: { ROWS: '7' } });
  t.equal(run.status.state, 'succeeded', run.status.error);
  t.same(run.status.steps.map((s) => [s.name, s.percentage, s.finished_at !== null]), [['fetch', 100, true]], 'the step and its last percentage');
  t.same(run.status.result, { rows: 7, exit_code: 0, artifacts: {} }, 'the reported output');
  const log = (await svc.call('read_task_log', { task_id: run.handle.task_id, offset: 0 })).body.answer.content;
  t.match(log, /WARNING ignored a Task protocol line: .*not JSON/, 'a line that is not JSON is logged');
  t.match(log, /WARNING ignored a Task protocol line: .*progress\.percentage is 250/, 'a report out of range is logged');
  t.match(log, /inputs file: \{/, 'TASKYARD_INPUTS names the inputs as JSON');

  // TASKYARD_ variables are the runner's (the run mark among them): the env input may not set them.
  const refused = await runCommand(svc, ['sh', script], { env: { TASKYARD_RUN_ID: 'x' } });
  t.same([refused.status.state, refused.status.error], ['failed', 'ValueError: env: TASKYARD_RUN_ID is set by taskyard and cannot be given']);
});

t.test('the TypeScript SDK is a client of the same protocol: ctx.metric lands in metrics.jsonl', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, {
    name: 'metric-fixture',
    tasks: `
import { defineTask } from 'taskyard/task';
export default [defineTask({
  name: 'ts-metrics', taskType: 'metrics', description: 'Reports three loss points and one NaN, then answers.',
  input: { type: 'object', properties: {} }, output: { type: 'object', properties: {} },
  async run(input, ctx) {
    for (let i = 0; i < 3; i++) ctx.metric('loss', 3 - i, { step: i });
    ctx.metric('grad_norm', Number.NaN);
    ctx.progress(100);
    return {};
  },
})];
`,
  });
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'ts-metrics' });
  const { status } = await waitTask(svc, handle);
  t.equal(status.state, 'succeeded', status.error);
  t.same(status.steps.map((s) => [s.name, s.finished_at !== null]), [['ts-metrics', true]], 'progress outside a step went to the implicit step, closed at the end');
  const points = (await readFile(join(workspace, 'metrics', handle.task_id, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(points.map(({ timestamp: _, ...p }) => p), [
    { name: 'loss', value: 3, step: 0 },
    { name: 'loss', value: 2, step: 1 },
    { name: 'loss', value: 1, step: 2 },
    { name: 'grad_norm', value: null },
  ], 'the points, NaN as null');
});
