// Runs on every HTTP front end.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { runCli } from '../helpers/run-cli.js';
import type { TestService } from '../helpers/service.js';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';
import { startTaskService } from './task-helpers.js';

/** `demo` is a cached Task here (config `tasks.demo.cache`); a hit says where it came from in status metadata. */
const svc = await startTaskService(t, { config: { tasks: { demo: { cache: true } } } });

async function cachedFrom(s: TestService, handle: TaskHandle): Promise<string | undefined> {
  const res = await s.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  t.equal((res.body.answer as TaskStatus).state, 'succeeded');
  return (await s.call('status', { task_id: handle.task_id })).body.metadata['cached_from'] as string | undefined;
}

t.test('HTTP and SSE: a hit, and no_cache forcing a run', async (t) => {
  const first = (await svc.call('submit', { task: 'demo', x: 7, y: 1 })).body.answer;
  t.equal(await cachedFrom(svc, first), undefined, 'the first submit runs');
  const hit = (await svc.call('submit', { task: 'demo', x: 7, y: 1 })).body.answer;
  t.equal(await cachedFrom(svc, hit), first.task_id, 'the same inputs hit over HTTP');
  const streamed = await svc.events('submit', { task: 'demo', x: 7, y: 1 });
  t.equal(await cachedFrom(svc, streamed.result!.answer), first.task_id, 'and over SSE');
  const forced = await svc.events('submit', { task: 'demo', x: 7, y: 1, no_cache: true });
  t.equal(await cachedFrom(svc, forced.result!.answer), undefined, 'no_cache over SSE runs it');
  const bad = await svc.call('submit', { task: 'demo', x: 7, y: 1, no_cache: 1 });
  t.equal(bad.body.success, false, 'a no_cache that is not a boolean is refused');
  t.equal(bad.body.answer, 'ValidationError: no_cache must be true or false; got 1');
});

t.test('MCP: the submit tool takes no_cache', async (t) => {
  const client = await connectMcp(t, svc.url, svc.token);
  const tools = await client.listTools();
  const submit = tools.tools.find((tool) => tool.name === 'submit');
  t.match(submit?.description, /no_cache: true \(beside task, not a Task input\) runs it anyway/, 'the tool says how to force a run');
  t.same(Object.keys(submit?.inputSchema.properties ?? {}), ['task'], 'its schema keeps the spec\'s parameters (extra fields allowed)');
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'submit', arguments: { task: 'demo', x: 8, y: 1, ...args } })).structuredContent as { answer: TaskHandle };
  const first = await call({ no_cache: true });
  t.equal(await cachedFrom(svc, first.answer), undefined);
  t.equal(await cachedFrom(svc, (await call({})).answer), first.answer.task_id, 'a hit over MCP');
  t.equal(await cachedFrom(svc, (await call({ no_cache: true })).answer), undefined, 'no_cache over MCP runs it');
});

t.test('CLI: submit --no-cache, listed in its help', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const cli = async (...args: string[]) => {
    const run = await runCli(['submit', '--task', 'demo', '--x', '9', '--y', '1', ...args], { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' });
    t.equal(run.code, 0, run.stderr);
    return (JSON.parse(run.stdout) as { answer: TaskHandle }).answer;
  };
  const first = await cli();
  t.equal(await cachedFrom(svc, first), undefined);
  t.equal(await cachedFrom(svc, await cli()), first.task_id, 'a hit from the CLI');
  t.equal(await cachedFrom(svc, await cli('--no-cache')), undefined, '--no-cache runs it');
  const help = await runCli(['submit', '--task', 'demo', '--help'], { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' });
  t.match(help.stdout, /--no-cache/, 'submit --task NAME --help lists it');
});
