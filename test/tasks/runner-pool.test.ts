import { mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { NO_RUN_YET, RUNNER_EVENTS } from '../../runner/spawner-messages.js';
import { onMessageLines } from '../../runner/message-check.js';
import type { TaskStatus } from '../../schemas/tasks.js';
import { LocalExecutor } from '../../supervisor/tasks/engines/local-executor.js';
import { createRunDir } from '../../supervisor/tasks/records/run-dir.js';
import { identityVariables, taskEnvironment } from '../../supervisor/tasks/engines/task-environment.js';
import { listProcesses } from '../../workers/process-tree.js';
import { waitFor } from '../helpers/wait-for.js';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';

/** Processes whose command line names `path` (the spawner and its runners name the pool directory). */
async function processesNaming(path: string): Promise<number[]> {
  const pids: number[] = [];
  for (const { pid, state } of await listProcesses()) {
    if (state === 'Z') continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '');
    if (cmdline.includes(path)) pids.push(pid);
  }
  return pids;
}

/** The sockets a process holds open. */
async function socketsOf(pid: number): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return links.filter((link) => link.startsWith('socket:'));
}

/** A queued built-in run, its directory created as submit creates it. */
async function queuedRun(workspace: string, task: 'demo' | 'sleep', config: Record<string, unknown>, n: number) {
  const runId = `${n}`.padStart(32, '0');
  const taskId = `base#${task}#pool-${n}`;
  const dir = join(workspace, 'base', taskId);
  const status: TaskStatus = {
    task_id: taskId, run_id: runId, task_type: 'base', task_name: task,
    config: { ...config, task_name: `pool-${n}`, source_tasks: '' },
    state: 'queued', pid: null, created_at: new Date().toISOString(), started_at: null, finished_at: null,
    steps: [], result: {}, error: '', exit_code: 0, log_path: `base/${taskId}/task.log`,
  };
  await createRunDir(dir, status).durable;
  const env = identityVariables({ workspace, dir, taskId, runId, taskType: 'base', registration: task, module: '' });
  return { runId, dir, spec: { runId, cwd: dir, logFile: join(dir, 'task.log'), env, resources: {}, taskId } };
}

/** A pooled executor in `workspace`; it unrefs its spawner (a service's own handles keep one alive), so the test holds a timer while it runs. */
function pooledExecutor(t: Test, poolDir: string, poolSize: number, growthHoldMs?: number): LocalExecutor {
  const executor = new LocalExecutor({ env: taskEnvironment(), poolDir, poolSize, graceMs: 1000, ...(growthHoldMs === undefined ? {} : { growthHoldMs }) });
  const keepAlive = setInterval(() => undefined, 1000);
  t.teardown(() => {
    executor.close();
    clearInterval(keepAlive);
  });
  return executor;
}

const readStatus = async (dir: string) => JSON.parse(await readFile(join(dir, 'status.json'), 'utf8')) as TaskStatus;

t.test('a pooled runner writes running before it acknowledges the run; the start carries that started_at, and the run keeps no channel to the spawner', async (t) => {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-pool-'));
  const poolDir = join(workspace, '.taskyard', 'runners');
  await mkdir(poolDir, { recursive: true });
  const executor = pooledExecutor(t, poolDir, 1);
  t.teardown(async () => {
    executor.close();
    await waitFor(async () => (await processesNaming(workspace)).length === 0, 10_000, 'the spawner and its runners to exit');
    await rm(workspace, { recursive: true, force: true });
  });

  // Two runs in a row: the pool's first runner, then the one the pool refilled after the hand-over.
  for (const n of [1, 2]) {
    const run = await queuedRun(workspace, 'sleep', { seconds: 0.5 }, n);
    const runner = await executor.start(run.spec);
    const onDisk = await readStatus(run.dir);
    t.equal(onDisk.state, 'running', `run ${n}: the record says running when the start is reported`);
    t.equal(runner.startedAt, onDisk.started_at, `run ${n}: the start carries the record's started_at`);
    t.equal(onDisk.pid, runner.pid, `run ${n}: and its pid`);
    // The runner closes its end of the channel right after acknowledging: bounded wait for that.
    await waitFor(async () => (await socketsOf(runner.pid!)).length === 0, 5000, `run ${n}: the runner to close its channel`);
    t.same(await runner.ended, { kind: 'exited', code: 0, signal: null }, `run ${n}: the runner exits 0`);
    t.equal((await readStatus(run.dir)).state, 'succeeded');
  }
});

t.test('idle pooled runners leave with their spawner and remove their slot logs', async (t) => {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-pool-'));
  const poolDir = join(workspace, '.taskyard', 'runners');
  await mkdir(poolDir, { recursive: true });
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const executor = pooledExecutor(t, poolDir, 2);
  // One run starts the spawner and its pool of two; it waited for a runner, so the pool doubled.
  const run = await queuedRun(workspace, 'demo', { x: 1, y: 2, fail: false }, 1);
  t.same(await (await executor.start(run.spec)).ended, { kind: 'exited', code: 0, signal: null });
  await waitFor(async () => (await readdir(poolDir)).length === 4, 10_000, 'four idle runners with their slot logs');
  executor.close();
  await waitFor(async () => (await processesNaming(workspace)).length === 0, 10_000, 'the spawner and its idle runners to exit');
  t.same(await readdir(poolDir), [], 'the idle runners removed their slot logs');
});

/** Pooled runners of `workspace` that are ready: idle (no run in their title) and blocked reading their channel (fd 3). */
async function readyRunners(workspace: string): Promise<number[]> {
  const ready: number[] = [];
  for (const pid of await processesNaming(workspace)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '');
    if (!cmdline.includes(NO_RUN_YET)) continue;
    const syscall = await readFile(`/proc/${pid}/syscall`, 'latin1').catch(() => '');
    if (syscall.startsWith('0 0x3 ')) ready.push(pid);
  }
  return ready;
}

/**
 * A workspace with a pool directory and a pooled executor of `size` whose runners are ready: its
 * first run waited for a runner (the pool starts with it), so that is twice `size` of them.
 */
async function readyPool(t: Test, size: number) {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-pool-'));
  const poolDir = join(workspace, '.taskyard', 'runners');
  await mkdir(poolDir, { recursive: true });
  const executor = pooledExecutor(t, poolDir, size);
  t.teardown(async () => {
    executor.close();
    await waitFor(async () => (await processesNaming(workspace)).length === 0, 10_000, 'the spawner and its runners to exit');
    await rm(workspace, { recursive: true, force: true });
  });
  const first = await queuedRun(workspace, 'demo', { x: 1, y: 2, fail: false }, 100);
  t.same(await (await executor.start(first.spec)).ended, { kind: 'exited', code: 0, signal: null }, 'the first run starts the pool');
  await waitFor(async () => executor.idleRunners === 2 * size && (await readyRunners(workspace)).length === 2 * size, 10_000, `${2 * size} ready runners, idle in the service`);
  return { workspace, executor };
}

t.test('ready runners killed before a run reaches them: the run goes to the next runner and succeeds', async (t) => {
  const { workspace, executor } = await readyPool(t, 2);
  const killed = await readyRunners(workspace);
  for (const pid of killed) process.kill(pid, 'SIGKILL');
  // At once, before the service can have seen their channels close: it may write the run to a
  // dead one, which never moved its log into place, so the run goes to the next runner.
  const run = await queuedRun(workspace, 'demo', { x: 2, y: 3, fail: false }, 1);
  const runner = await executor.start(run.spec);
  t.notOk(killed.includes(runner.pid!), 'a live runner took it');
  t.same(await runner.ended, { kind: 'exited', code: 0, signal: null });
  t.equal((await readStatus(run.dir)).state, 'succeeded', 'the run succeeded');
});

t.test('a runner that dies after it got its run, without answering: the start fails and says so', async (t) => {
  const { workspace, executor } = await readyPool(t, 1);
  const run = await queuedRun(workspace, 'demo', { x: 2, y: 3, fail: false }, 1);
  // Its log can be moved into place, but its working directory is gone: the runner exits at chdir.
  const spec = { ...run.spec, cwd: join(workspace, 'gone') };
  await t.rejects(executor.start(spec), /the pooled task runner exited before it took the run/);
  // The pool goes on: the next run is taken.
  const next = await queuedRun(workspace, 'demo', { x: 2, y: 3, fail: false }, 2);
  t.same(await (await executor.start(next.spec)).ended, { kind: 'exited', code: 0, signal: null }, 'the next run succeeds');
});

t.test('the service stops right after handing a run over: the runner takes it, names it in /proc, and a new service adopts it', async (t) => {
  const { workspace, executor } = await readyPool(t, 1);
  // Long enough to be still running when the new executor scans /proc for it on a loaded machine
  // (a 1 s run in a workspace in memory, whose record writes cost no disk flush, ended first).
  const run = await queuedRun(workspace, 'sleep', { seconds: 4 }, 1);
  const started = executor.start(run.spec);
  executor.close();
  const runner = await started;
  t.equal((await readStatus(run.dir)).state, 'running', 'the runner wrote its running record');
  const again = new LocalExecutor({ env: taskEnvironment(), poolDir: join(workspace, '.taskyard', 'runners'), poolSize: 0, graceMs: 1000 });
  t.teardown(() => again.close());
  const adopted = await again.adopt([{ runId: run.runId, dir: run.dir }]);
  t.equal(adopted.get(run.runId)?.pid, runner.pid, 'a restarted service finds the runner by its run');
  await waitFor(async () => (await readStatus(run.dir)).state === 'succeeded', 20_000, 'the run to succeed');
  t.same(await adopted.get(run.runId)!.ended, { kind: 'lost', pid: runner.pid }, 'and sees its end in /proc');
});

t.test('a run that waits for a runner doubles the pool, and no more', async (t) => {
  // The first run waited: readyPool sees two ready runners for a pool of one.
  const { workspace, executor } = await readyPool(t, 1);
  // Three at once: two take the idle runners, the third waits again.
  const runs = await Promise.all([1, 2, 3].map((n) => queuedRun(workspace, 'demo', { x: n, y: 1, fail: false }, n)));
  const ends = await Promise.all(runs.map(async (run) => (await executor.start(run.spec)).ended));
  t.same(ends, runs.map(() => ({ kind: 'exited', code: 0, signal: null })), 'all three ran');
  await waitFor(async () => executor.idleRunners === 2 && (await readyRunners(workspace)).length === 2, 10_000, 'two ready runners again');
  t.equal((await processesNaming(workspace)).length, 3, 'the spawner and two runners: none beyond twice the pool size');
});

t.test('once no run has waited for the hold time, the idle runners beyond the pool exit, and the pool still serves', async (t) => {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-pool-'));
  const poolDir = join(workspace, '.taskyard', 'runners');
  await mkdir(poolDir, { recursive: true });
  const executor = pooledExecutor(t, poolDir, 1, 300);
  t.teardown(async () => {
    executor.close();
    await waitFor(async () => (await processesNaming(workspace)).length === 0, 10_000, 'the spawner and its runners to exit');
    await rm(workspace, { recursive: true, force: true });
  });
  // The first run waits (the pool starts with it): the pool grows to two runners beyond the run's own.
  const first = await queuedRun(workspace, 'demo', { x: 1, y: 2, fail: false }, 1);
  t.same(await (await executor.start(first.spec)).ended, { kind: 'exited', code: 0, signal: null });
  // Two idle runners (three processes with the spawner) until the hold is over, then one.
  await waitFor(
    async () => executor.idleRunners === 1 && (await readyRunners(workspace)).length === 1 && (await processesNaming(workspace)).length === 2,
    10_000,
    'the spawner and one ready runner: the pool size',
  );
  t.same(await readdir(poolDir).then((logs) => logs.length), 1, 'the runner let go removed its slot log');
  const next = await queuedRun(workspace, 'demo', { x: 2, y: 2, fail: false }, 2);
  t.same(await (await executor.start(next.spec)).ended, { kind: 'exited', code: 0, signal: null }, 'the next run is served');
});

t.test('a runner channel yields its JSON lines, across chunks, and ignores what is not JSON', async (t) => {
  const stream = new PassThrough();
  const events: unknown[] = [];
  const refused: string[] = [];
  onMessageLines(stream, RUNNER_EVENTS, (event) => events.push(event), (error) => refused.push(error));
  stream.write('{"type":"rea');
  stream.write('dy"}\nnot json\n{"type":"accepted","startedAt":null,"reusable":false}\n{"type":');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(events, [{ type: 'ready' }, { type: 'accepted', startedAt: null, reusable: false }]);
  t.match(refused, [/not JSON/]);
});
