import t from 'tap';
import { makeWorkspace, startTaskService, statusOf, submitOk, waitState, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';
import { waitFor, type TestService } from '../helpers/service.js';

/** Plugin Tasks that report the GPUs they see; `gpu-env` declares one GPU, `gpu-hog` gets three from config. */
const GPU_TASKS = `
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';
const seen = (name) => ({
  name,
  taskType: 'gpu',
  description: 'Logs the GPUs it may use (CUDA_VISIBLE_DEVICES), then waits the given seconds.',
  input: { type: 'object', properties: { seconds: { type: 'number', default: 300 } } },
  output: { type: 'object', properties: { visible: { type: 'string' } } },
  async run(input) {
    const visible = String(process.env.CUDA_VISIBLE_DEVICES);
    console.log('visible=' + visible);
    await delay(input.seconds * 1000);
    return { visible };
  },
});
export default [defineTask({ ...seen('gpu-env'), resources: { gpus: 1, cpus: 1 } }), defineTask(seen('gpu-hog'))];
`;

async function visibleOf(svc: TestService, taskId: string): Promise<string> {
  const { content } = (await svc.call('read_task_log', { task_id: taskId, offset: 0 })).body.answer;
  return /visible=(\S*)/.exec(content)?.[1] ?? '';
}

t.test('local admission by GPUs: two of four one-GPU Tasks run on distinct GPUs, the others wait in order', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'gpu-fixture', tasks: GPU_TASKS });
  const svc = await startTaskService(t, { workspace, config: { service: { gpus: 2 }, tasks: { 'gpu-hog': { resources: { gpus: 3 } } } } });

  const def = (await svc.call('get_task_definition', { task: 'gpu-env' })).body.answer;
  t.same(def.resources, { gpus: 1, cpus: 1 }, 'the definition shows its resources');
  const hogDef = (await svc.call('get_task_definition', { task: 'gpu-hog' })).body.answer;
  t.same(hogDef.resources, { gpus: 3 }, 'config tasks.<name>.resources overrides the definition');

  const handles: Handle[] = [];
  for (let i = 0; i < 4; i++) handles.push(await submitOk(t, svc, { task: 'gpu-env' }));
  const [a, b, c, d] = handles as [Handle, Handle, Handle, Handle];
  await waitState(svc, a.task_id, 'running');
  await waitState(svc, b.task_id, 'running');
  const visible = await Promise.all([a, b].map((h) => loggedGpus(svc, h.task_id)));
  t.same([...visible].sort(), ['0', '1'], 'each running Task sees only its own GPU');
  t.equal((await statusOf(svc, c.task_id)).state, 'queued', 'the third waits');
  t.equal((await statusOf(svc, d.task_id)).state, 'queued', 'the fourth waits');

  const machine = (await svc.call('machine_status')).body.answer;
  t.same(
    machine.gpu_leases.map((l) => l.task_id).sort(),
    [a.task_id, b.task_id].sort(),
    'machine_status shows which Task holds which GPU',
  );

  const freed = visible[0] === '0' ? 0 : 1;
  t.equal((await svc.call('cancel', { task_id: a.task_id })).body.answer, true);
  await waitState(svc, c.task_id, 'running');
  t.equal(await loggedGpus(svc, c.task_id), String(freed), 'the next in order gets the freed GPU');
  t.equal((await statusOf(svc, d.task_id)).state, 'queued', 'the last still waits');

  const refused = await svc.call('submit', { task: 'gpu-hog' });
  t.equal(refused.body.success, false);
  t.match(refused.body.answer, /^ValueError: task gpu-hog asks for 3 GPUs but this machine has 2/, 'asking for more than the machine has is refused, naming both numbers');

  for (const h of [b, c, d]) await svc.call('cancel', { task_id: h.task_id });
  const cancelled = await waitTask(svc, d);
  t.equal(cancelled.status.state, 'cancelled', 'a queued Task is cancelled without ever starting');
  t.same((await svc.call('machine_status')).body.answer.gpu_leases, [], 'no lease is left');
});

/** The GPUs a running Task logged (bounded wait for its first line). */
async function loggedGpus(svc: TestService, taskId: string): Promise<string> {
  return waitFor(async () => (await visibleOf(svc, taskId)) || null, 15_000, `${taskId} to log its GPUs`);
}

t.test('a local run exceeding resources.time_limit_s fails with a clear error', async (t) => {
  const svc = await startTaskService(t, { config: { tasks: { sleep: { resources: { time_limit_s: 1 } } } } });
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 30 });
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'failed');
  t.match(done.status.error, /^TimeoutError: the Task exceeded its time limit of 1 s/);
});

t.test('config rejects malformed resources and executors, naming the field', async (t) => {
  const { validateConfig } = await import('../../supervisor/common/config.js');
  t.throws(() => validateConfig({ tasks: { sleep: { resources: { gpus: -1 } } } }, 'test'), /tasks\.sleep\.resources\.gpus/);
  t.throws(() => validateConfig({ tasks: { sleep: { resources: { disks: 1 } } } }, 'test'), /tasks\.sleep\.resources\.disks: unknown field/);
  t.throws(() => validateConfig({ executor: { kind: 'nomad' } }, 'test'), /executor\.kind/);
  t.equal(validateConfig({}, 'test').executor.kind, 'local');
});

t.test('a restart gives an adopted run back the GPU it holds', async (t) => {
  const workspace = await makeWorkspace(t);
  const config = { service: { gpus: 1 }, tasks: { sleep: { resources: { gpus: 1 } } } };
  const first = await startTaskService(t, { workspace, config });
  const held = await submitOk(t, first, { task: 'sleep', seconds: 120 });
  await waitState(first, held.task_id, 'running');
  await first.close();

  const second = await startTaskService(t, { workspace, config });
  t.equal((await statusOf(second, held.task_id)).state, 'running', 'adopted');
  const leases = (await second.call('machine_status')).body.answer.gpu_leases;
  t.same(leases.map((l) => [l.index, l.task_id]), [[0, held.task_id]], 'the adopted run still holds GPU 0');
  const next = await submitOk(t, second, { task: 'sleep', seconds: 0 });
  t.equal((await statusOf(second, next.task_id)).state, 'queued', 'the next GPU Task waits for it');
  t.equal((await second.call('cancel', { task_id: held.task_id })).body.answer, true);
  t.equal((await waitTask(second, next)).status.state, 'succeeded', 'and runs once it is free');
});
