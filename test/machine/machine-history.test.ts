import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { MachineHistory } from '../../schemas/machine-history.js';
import { check } from '../../schemas/validator.js';
import { ConfigError, validateConfig } from '../../supervisor/common/config.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { burnArgv, fixtureNvidiaSmi, GPU_MIB_PER_PROCESS } from './fixture-nvidia-smi.js';

const dir = await mkdtemp(join(tmpdir(), 'taskyard-history-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const history = { interval_ms: 200, window_s: 2 }; // a ring of 10 samples
const svc = await startTestService(t, {
  config: { machine: { history, gpu_commands: { nvidia_smi: await fixtureNvidiaSmi(dir), rocm_smi: join(dir, 'no-rocm-smi') } } },
});

async function read(service: TestService, since?: number): Promise<MachineHistory> {
  const res = await service.call('read_machine_history', since === undefined ? {} : { since });
  if (res.status !== 200 || !res.body.success) throw new Error(`read_machine_history failed: ${JSON.stringify(res.body)}`);
  const checked = check(MachineHistory, res.body.answer);
  if (!checked.ok) throw new Error(`not a MachineHistory: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

t.test('samples of the machine arrive within a bound, over HTTP JSON, SSE and MCP', async (t) => {
  const first = await waitFor(async () => ((await read(svc)).times.length >= 2 ? read(svc) : undefined), 10_000, 'two samples');
  t.equal(first.interval_ms, 200);
  t.equal(first.window_s, 2);
  t.equal(first.cursor, first.times.at(-1), 'the cursor is the latest sample time');
  t.ok(first.times.every((at, i) => i === 0 || at > first.times[i - 1]!), 'times strictly increase');
  t.ok(first.cpu_percent.every((c) => c !== null && c >= 0 && c <= 100), 'machine CPU % in [0, 100]');
  t.ok(first.memory_total_bytes !== null && first.memory_total_bytes > 0);
  t.ok(first.memory_used_bytes.every((m) => m > 0 && m <= first.memory_total_bytes!));
  t.same(
    first.gpus.map((g) => [g.index, g.name, g.memory_total_bytes]),
    [
      [0, 'NVIDIA H100 80GB HBM3', 81559 * 1024 * 1024],
      [1, 'NVIDIA H100 80GB HBM3', 81559 * 1024 * 1024],
    ],
  );
  t.same(first.gpus[1]!.utilization_percent, first.times.map(() => 97), 'per-GPU utilization aligned with times');
  t.same(first.gpus[1]!.memory_used_bytes, first.times.map(() => 61440 * 1024 * 1024));
  const status = await svc.call('machine_status');
  t.same(status.body.success && status.body.answer.gpus.map((g) => g.utilization_percent), [0, 97], 'machine_status asks the tools of machine.gpu_commands too');

  const newer = await waitFor(async () => {
    const answer = await read(svc, first.cursor);
    return answer.times.length > 0 ? answer : undefined;
  }, 10_000, 'a sample after the cursor');
  t.ok(newer.times.every((at) => at > first.cursor), 'since answers only newer samples');
  const none = await read(svc, newer.cursor);
  t.ok(none.times.length <= 1, 'read again at once: nothing, or the one sample taken meanwhile');
  t.ok(none.cursor >= newer.cursor);

  const sse = await svc.events('read_machine_history', { since: newer.cursor });
  t.equal(sse.events.at(-1)?.['kind'], 'result');
  t.ok(check(MachineHistory, sse.events.at(-1)?.['answer']).ok, 'SSE result is a MachineHistory');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'read_machine_history', arguments: {} });
  t.equal(result.isError, false);
  t.ok(check(MachineHistory, (result.structuredContent as { answer: unknown }).answer).ok, 'MCP answer is a MachineHistory');
});

t.test('the ring keeps the window and no more', async (t) => {
  const full = await waitFor(async () => {
    const answer = await read(svc);
    return answer.times.length >= 10 ? answer : undefined;
  }, 15_000, 'a full ring');
  t.equal(full.times.length, 10, '2 s at 200 ms: 10 samples');
  const later = await waitFor(async () => {
    const answer = await read(svc);
    return answer.times[0]! > full.times.at(-1)! ? answer : undefined;
  }, 15_000, 'the ring to turn over');
  t.equal(later.times.length, 10, 'still 10 once older samples were overwritten');
  t.equal(later.cpu_percent.length, 10);
  t.equal(later.gpus[0]!.utilization_percent.length, 10);
});

t.test('a running Task shows its process tree CPU, RSS and GPU memory', async (t) => {
  const submitted = await svc.call('submit', { task: 'command', argv: burnArgv(1) });
  t.equal(submitted.status, 200);
  const taskId = submitted.body.answer.task_id;
  const busy = await waitFor(async () => {
    const series = (await read(svc)).tasks[taskId];
    const at = series?.cpu_percent.findIndex((c) => c !== null && c > 5) ?? -1;
    return series && at >= 0 ? { series, at } : undefined;
  }, 20_000, 'the burning Task to show CPU');
  const { series, at } = busy;
  t.ok(series.cpu_percent[at]! > 5, `CPU ${series.cpu_percent[at]}% of one core`);
  t.ok(series.rss_bytes[at]! > 1024 * 1024, `RSS ${series.rss_bytes[at]} bytes`);
  t.ok(series.processes[at]! >= 2, 'the runner and its command');
  t.equal(series.gpu_memory_bytes[at], GPU_MIB_PER_PROCESS * 1024 * 1024, 'GPU memory of the tree from the compute apps');
  t.equal(series.times.length, series.cpu_percent.length);
  t.equal(series.run_id, submitted.body.answer.run_id);

  t.equal((await svc.call('cancel', { task_id: taskId })).status, 200);
  await svc.call('wait_task', { task_id: taskId });
  const ended = (await read(svc)).cursor;
  const after = await waitFor(async () => {
    const answer = await read(svc, ended);
    return answer.times.length > 0 ? answer : undefined;
  }, 10_000, 'a sample after the Task ended');
  t.notOk(after.tasks[taskId], 'an ended Task is sampled no more');
});

t.test('bad cursors get a clear answer', async (t) => {
  for (const since of [-1, 1.5, 'yesterday', null]) {
    const res = await svc.call('read_machine_history', { since });
    t.equal(res.status, 422, `since ${JSON.stringify(since)} is refused`);
  }
  t.equal((await svc.call('read_machine_history', { since: 0, extra: 1 })).status, 422, 'unknown fields are refused');
  const future = Date.now() + 3_600_000;
  const res = await svc.call('read_machine_history', { since: future });
  t.equal(res.status, 200);
  t.equal(res.body.success, false);
  t.match(String(res.body.answer), /^ValueError: since \d+ is later than the service's latest sample time \(\d+\): pass 0, or the cursor of a previous read_machine_history answer$/);
  t.ok((await read(svc)).times.length > 0, 'the service goes on sampling');
});

t.test('machine.history is validated with messages that name the fix', async (t) => {
  const invalid = (machine: unknown) => {
    try {
      validateConfig({ machine }, 'machine.yaml');
      return '';
    } catch (err) {
      t.ok(err instanceof ConfigError);
      return (err as Error).message;
    }
  };
  t.match(invalid({ history: { interval_ms: 10 } }), /machine\.history\.interval_ms/);
  t.match(invalid({ history: { window_s: 0 } }), /machine\.history\.window_s/);
  t.match(invalid({ history: { every: 5 } }), /every/);
  t.match(invalid({ history: { interval_ms: 100, window_s: 3600 } }), /machine\.history: window_s 3600 at interval_ms 100 keeps 36000 samples, more than the 10000 allowed: raise interval_ms or lower window_s/);
  t.equal(invalid({}), '', 'the defaults are valid');
  t.same(validateConfig({}, 'x').machine.history, { enabled: true, interval_ms: 5000, window_s: 3600 }, 'documented defaults');
});

t.test('with machine.history.enabled false nothing is sampled', async (t) => {
  const off = await startTestService(t, { config: { machine: { history: { enabled: false } } } });
  const answer = await read(off);
  t.same([answer.times, answer.tasks, answer.cursor], [[], {}, 0]);
});

/** The pids of live processes whose command line holds `text`. */
async function processesWith(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const line = await readFile(`/proc/${name}/cmdline`, 'latin1').catch(() => '');
    const state = await readFile(`/proc/${name}/stat`, 'latin1').catch(() => '');
    if (line.includes(text) && !/\) Z /.test(state)) found.push(Number(name));
  }
  return found;
}

t.test('a sample in progress ends with the service: a hung GPU tool is not left running', async (t) => {
  const hung = join(dir, 'hung-smi');
  // Each start of the tool notes its pid: the wait reads those, not the whole of /proc on every poll.
  const pids = join(dir, 'hung-smi.pids');
  await writeFile(hung, `#!/bin/sh\necho $$ >> ${pids}\nexec sleep 3600.4242\n`);
  await chmod(hung, 0o755);
  const svc = await startTestService(t, { config: { machine: { history: { interval_ms: 100, window_s: 10 }, gpu_commands: { nvidia_smi: hung, rocm_smi: hung } } } });
  const running = async () => {
    for (const pid of (await readFile(pids, 'utf8').catch(() => '')).split('\n').filter(Boolean)) {
      if ((await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).includes('3600.4242')) return true;
    }
    return false;
  };
  await waitFor(running, 10_000, 'the hung GPU tool to run');
  await svc.close();
  t.same(await processesWith('3600.4242'), [], 'stopping the sampler killed it');
});
