import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { makeWorkspace, startTaskService, statusOf, submitOk, waitState, waitTask, writeFixturePlugin, type Handle } from './task-helpers.js';
import { waitFor, type TestService } from '../helpers/service.js';
import type { TaskStatus } from '../../schemas/tasks.js';

/**
 * Fixture Tasks: `consume` (cache: true) appends a line to runs-<tag>.txt in the workspace each
 * time it runs, so the lines count its runs; `plain` is the same without the cache; `produce`
 * writes its text as an artifact (a source Task whose bytes a re-run changes).
 */
const CACHE_TASKS = `
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';

const body = (cache) => ({
  taskType: 'cachefx',
  ...(cache ? { cache: true } : {}),
  description: 'Counts its runs in runs-<tag>.txt, optionally waits for a file, and writes an artifact from its inputs.',
  input: { type: 'object', properties: { tag: { type: 'string' }, n: { type: 'integer', default: 1 }, hold: { type: 'string' } }, required: ['tag'] },
  output: { type: 'object', properties: { n: { type: 'integer' } } },
  async run(input, ctx) {
    appendFileSync(join(ctx.workspace_path, 'runs-' + input.tag + '.txt'), ctx.task_id + '\\n');
    while (input.hold && !existsSync(join(ctx.workspace_path, input.hold))) await delay(20);
    mkdirSync('sub');
    writeFileSync('sub/out.txt', ('n=' + input.n + ' sources=' + input.source_tasks + '\\n').repeat(500));
    await ctx.artifact('out', 'sub/out.txt');
    await ctx.artifact('same-file', 'sub/out.txt');
    return { n: input.n };
  },
});

export default [
  defineTask({ name: 'consume', ...body(true) }),
  defineTask({ name: 'plain', ...body(false) }),
  defineTask({
    name: 'produce',
    taskType: 'cachefx',
    description: 'Writes its text as the artifact data.',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      writeFileSync('data.txt', input.text);
      await ctx.artifact('data', 'data.txt');
      return {};
    },
  }),
];
`;

async function cacheService(t: Test, workspace?: string): Promise<TestService> {
  const ws = workspace ?? (await makeWorkspace(t));
  if (!workspace) await writeFixturePlugin(ws, { name: 'taskyard-cache-fixture', tasks: CACHE_TASKS });
  return startTaskService(t, { workspace: ws, config: { tasks: { demo: { cache: true } } } });
}

/** How many times `consume`/`plain` ran with this tag. */
function runsOf(svc: TestService, tag: string): number {
  const file = join(svc.workspace, `runs-${tag}.txt`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

async function runOk(t: Test, svc: TestService, args: Record<string, unknown>): Promise<{ handle: Handle; status: TaskStatus }> {
  const handle = await submitOk(t, svc, args);
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'succeeded', `${handle.task_id} succeeds: ${done.status.error}`);
  return { handle, status: done.status };
}

/** The Task's directory in the workspace. */
function dirOf(svc: TestService, status: TaskStatus): string {
  return join(svc.workspace, status.task_type, status.task_id);
}

/** Every artifact of a status checks against its recorded sha256 and size. */
function checkArtifacts(t: Test, svc: TestService, status: TaskStatus): void {
  const artifacts = status.result['artifacts'] as Record<string, { path: string; size: number; sha256: string }>;
  t.ok(Object.keys(artifacts).length > 0, 'the Task has artifacts');
  for (const [name, a] of Object.entries(artifacts)) {
    const bytes = readFileSync(join(dirOf(svc, status), a.path));
    t.equal(createHash('sha256').update(bytes).digest('hex'), a.sha256, `artifact ${name} verifies by sha256`);
    t.equal(bytes.length, a.size, `artifact ${name} has its recorded size`);
  }
}

// One service for the tests that count their own tag's runs; restart and deletion start their own.
const shared = await cacheService(t);

t.test('a hit answers at once, without a process, as a new succeeded Task marked as a cache hit', async (t) => {
  const svc = shared;
  const first = await runOk(t, svc, { task: 'consume', tag: 'hit', n: 2 });
  t.equal(runsOf(svc, 'hit'), 1, 'the first submit runs');

  const handle = await submitOk(t, svc, { task: 'consume', tag: 'hit', n: 2 });
  t.not(handle.task_id, first.handle.task_id, 'the hit is a new Task');
  const status = await statusOf(svc, handle.task_id);
  t.equal(status.state, 'succeeded', 'succeeded as soon as submit answered');
  t.equal(status.pid, null, 'no process ran it');
  t.equal(status.run_id, handle.run_id);
  t.equal(runsOf(svc, 'hit'), 1, 'the Task code did not run again');
  t.same(status.result, first.status.result, 'the cached result');
  checkArtifacts(t, svc, status);

  const metadata = JSON.parse(readFileSync(join(dirOf(svc, status), 'metadata.json'), 'utf8')) as Record<string, unknown>;
  t.equal(metadata['task_id'], handle.task_id, 'metadata.json is the new Task\'s');
  t.equal((metadata['input_params'] as Record<string, unknown>)['task_name'], status.config['task_name']);
  t.same(metadata['output_params'], first.status.result);
  const marker = JSON.parse(readFileSync(join(dirOf(svc, status), 'cache-hit.json'), 'utf8')) as Record<string, unknown>;
  t.same(marker, { source_task_id: first.handle.task_id, source_run_id: first.handle.run_id }, 'the marker names the source Task');

  const waited = await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  t.equal(waited.body.answer.state, 'succeeded', 'wait_task answers the hit');
  const one = await svc.call('status', { task_id: handle.task_id });
  t.equal(one.body.metadata['cached_from'], first.handle.task_id, 'status metadata names the source');
  t.equal((await svc.call('status', { task_id: first.handle.task_id })).body.metadata['cached_from'], undefined, 'a run is not marked');
  const context = await svc.call('get_task_context', { task_id: handle.task_id });
  t.equal(context.body.metadata['cached_from'], first.handle.task_id, 'get_task_context metadata names the source');
  const page = await svc.call('query_task_statuses', { registration: 'consume' });
  t.same(page.body.metadata['cached_from'], { [handle.task_id]: first.handle.task_id }, 'query_task_statuses marks the hit only');
  t.ok(page.body.answer.items.some((s: TaskStatus) => s.task_id === handle.task_id), 'the hit is listed');
  const listed = await svc.call('list_task_statuses');
  t.ok(listed.body.answer.some((s: TaskStatus) => s.task_id === handle.task_id && s.state === 'succeeded'), 'list_task_statuses shows it');

  // A fixed name: the hit takes it, and takes it again once that Task is finished.
  const fixed = await submitOk(t, svc, { task: 'consume', tag: 'hit', n: 2, task_name: 'hit-fixed' });
  t.equal(fixed.task_id, 'cachefx#consume#hit-fixed');
  const again = await submitOk(t, svc, { task: 'consume', tag: 'hit', n: 2, task_name: 'hit-fixed' });
  t.not(again.run_id, fixed.run_id, 'a new run of the same fixed name');
  t.equal((await statusOf(svc, again.task_id)).run_id, again.run_id);
  t.equal(runsOf(svc, 'hit'), 1, 'still one run');
});

t.test('a fixed name that is still active is refused, hit or not', async (t) => {
  const svc = shared;
  await runOk(t, svc, { task: 'consume', tag: 'busy' });
  const busy = await submitOk(t, svc, { task: 'consume', tag: 'busy', n: 9, task_name: 'busy', hold: 'release-busy' });
  await waitState(svc, busy.task_id, 'running');
  const refused = await svc.call('submit', { task: 'consume', tag: 'busy', task_name: 'busy' });
  t.equal(refused.body.success, false);
  t.match(refused.body.answer, /^FileExistsError: Task cachefx#consume#busy is still active/);
  writeFileSync(join(svc.workspace, 'release-busy'), '');
  t.equal((await waitTask(svc, busy)).status.state, 'succeeded');
});

t.test('a changed input misses; no_cache forces a run, and only a boolean is taken', async (t) => {
  const svc = shared;
  await runOk(t, svc, { task: 'consume', tag: 'inputs', n: 1 });
  await runOk(t, svc, { task: 'consume', tag: 'inputs', n: 2 });
  t.equal(runsOf(svc, 'inputs'), 2, 'another input value runs');
  await submitOk(t, svc, { task: 'consume', tag: 'inputs', n: 2 });
  t.equal(runsOf(svc, 'inputs'), 2, 'the same inputs hit (the default of n counts as given)');
  const forced = await runOk(t, svc, { task: 'consume', tag: 'inputs', n: 2, no_cache: true });
  t.equal(runsOf(svc, 'inputs'), 3, 'no_cache runs it');
  t.notOk('no_cache' in forced.status.config, 'no_cache is not a Task input');
  const bad = await svc.call('submit', { task: 'consume', tag: 'inputs', no_cache: 'yes' });
  t.equal(bad.body.success, false, 'a non-boolean no_cache is refused');
  t.equal(bad.body.answer, 'ValidationError: no_cache must be true or false; got "yes"');
  t.equal(runsOf(svc, 'inputs'), 3, 'nothing ran');
});

t.test('a changed input artifact misses: the source Task re-run with different bytes', async (t) => {
  const svc = shared;
  await runOk(t, svc, { task: 'produce', text: 'first bytes', task_name: 'src' });
  const args = { task: 'consume', tag: 'artifact', source_tasks: 'cachefx#produce#src' };
  await runOk(t, svc, args);
  await submitOk(t, svc, args);
  t.equal(runsOf(svc, 'artifact'), 1, 'the same source artifact hits');
  await runOk(t, svc, { task: 'produce', text: 'other bytes', task_name: 'src' });
  await runOk(t, svc, args);
  t.equal(runsOf(svc, 'artifact'), 2, 'a source whose artifact changed misses');
  await runOk(t, svc, { task: 'produce', text: 'first bytes', task_name: 'src' });
  await submitOk(t, svc, args);
  t.equal(runsOf(svc, 'artifact'), 2, 'the same bytes again (a new run of the source) hit: the key is their sha256');
});

t.test('a Task without cache never hits; the config turns a built-in into a cached one', async (t) => {
  const svc = shared;
  await runOk(t, svc, { task: 'plain', tag: 'plain' });
  await runOk(t, svc, { task: 'plain', tag: 'plain' });
  t.equal(runsOf(svc, 'plain'), 2, 'every submit runs');
  const first = await runOk(t, svc, { task: 'demo', x: 40, y: 2 });
  const hit = await submitOk(t, svc, { task: 'demo', x: 40, y: 2 });
  const status = await svc.call('status', { task_id: hit.task_id });
  t.equal(status.body.answer.state, 'succeeded');
  t.equal(status.body.answer.result['result'], 42);
  t.equal(status.body.metadata['cached_from'], first.handle.task_id, 'config tasks.demo.cache: true');
});

t.test('deleting the source invalidates its entry; the hits keep their artifacts', async (t) => {
  const svc = await cacheService(t);
  const source = await runOk(t, svc, { task: 'consume', tag: 'delete' });
  const hit = await submitOk(t, svc, { task: 'consume', tag: 'delete' });
  const deleted = await svc.call('delete_tasks', { task_ids: [source.handle.task_id] });
  t.same(deleted.body.answer, [source.handle.task_id]);
  checkArtifacts(t, svc, await statusOf(svc, hit.task_id));
  t.equal((await svc.call('status', { task_id: hit.task_id })).body.metadata['cached_from'], source.handle.task_id, 'the hit still says where it came from');
  await runOk(t, svc, { task: 'consume', tag: 'delete' });
  t.equal(runsOf(svc, 'delete'), 2, 'the next submit runs');
  const store = JSON.parse(readFileSync(join(svc.workspace, '.taskyard', 'result-cache.json'), 'utf8')) as { entries: Record<string, { task_id: string }> };
  t.notOk(Object.values(store.entries).some((e) => e.task_id === source.handle.task_id), 'no entry names the deleted Task');
});

t.test('a restart keeps the cache, and a run that succeeded while no service watched becomes an entry', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-cache-fixture', tasks: CACHE_TASKS });
  const first = await cacheService(t, workspace);
  const source = await runOk(t, first, { task: 'consume', tag: 'restart' });
  await first.close();

  const second = await cacheService(t, workspace);
  const hit = await submitOk(t, second, { task: 'consume', tag: 'restart' });
  t.equal(runsOf(second, 'restart'), 1, 'answered from the cache after a restart');
  t.equal((await second.call('status', { task_id: hit.task_id })).body.metadata['cached_from'], source.handle.task_id);
  await second.close();

  // A run of a cached Task still going when its service stops, and ending before the next starts.
  const third = await cacheService(t, workspace);
  t.equal((await third.call('status', { task_id: hit.task_id })).body.metadata['cached_from'], source.handle.task_id, 'the mark survives a restart');
  const held = await submitOk(t, third, { task: 'consume', tag: 'restart', n: 5, hold: 'release-restart' });
  await waitState(third, held.task_id, 'running');
  await third.close();
  writeFileSync(join(workspace, 'release-restart'), '');
  const record = join(workspace, 'cachefx', held.task_id, 'status.json');
  await waitFor(() => existsSync(record) && (JSON.parse(readFileSync(record, 'utf8')) as TaskStatus).state === 'succeeded', 15_000, 'the run to succeed on its own');

  const fourth = await cacheService(t, workspace);
  const late = await submitOk(t, fourth, { task: 'consume', tag: 'restart', n: 5, hold: 'release-restart' });
  t.equal((await fourth.call('status', { task_id: late.task_id })).body.metadata['cached_from'], held.task_id, 'the run that ended meanwhile answers its key');
  t.equal(runsOf(fourth, 'restart'), 2, 'two runs in all');
});

t.test('a cached Task that succeeds on a retry answers its key with its final run; a failure is never cached', async (t) => {
  const svc = await startTaskService(t, { config: { tasks: { command: { cache: true, retries: { max: 1, exit_codes: [3] } } } } });
  const argv = ['sh', '-c', 'if [ -e attempted ]; then echo ok; else touch attempted; exit 3; fi'];
  const first = await submitOk(t, svc, { task: 'command', argv });
  const done = await svc.call('wait_task', { task_id: first.task_id, run_id: first.run_id });
  t.equal(done.body.answer.state, 'succeeded');
  t.not(done.body.answer.run_id, first.run_id, 'it succeeded on its second attempt');
  const hit = await submitOk(t, svc, { task: 'command', argv });
  const status = await svc.call('status', { task_id: hit.task_id });
  t.equal(status.body.metadata['cached_from'], first.task_id, 'the retried Task answers');
  t.equal(status.body.answer.pid, null);

  const failing = ['sh', '-c', 'exit 4'];
  for (let i = 0; i < 2; i++) {
    const handle = await submitOk(t, svc, { task: 'command', argv: failing });
    t.equal((await waitTask(svc, handle)).status.state, 'failed', `submit ${i + 1} runs and fails`);
  }
});
