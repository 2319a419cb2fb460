import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { isAlive } from '../../workers/process-tree.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { exited, SERVICE_PROCESS_TOKEN, startServiceProcess } from '../helpers/service-process.js';
import { makeWorkspace, killTaskProcesses } from '../tasks/task-helpers.js';
import type { TaskStatus } from '../../schemas/tasks.js';

async function submit(svc: TestService, args: Record<string, unknown>): Promise<{ task_id: string; run_id: string }> {
  const { task_id, run_id } = (await svc.call('submit', args)).body.answer;
  return { task_id, run_id };
}

/** Starts a task-augmented call and answers its MCP task, leaving the stream to run on. */
async function startTask(mcp: Client, name: string, args: Record<string, unknown>): Promise<{ task: Task; rest: Promise<Array<{ type: string }>> }> {
  const stream = mcp.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } });
  const first = await stream.next();
  if (first.done || first.value.type !== 'taskCreated') throw new Error(`expected taskCreated, got ${JSON.stringify(first.value)}`);
  const rest = (async () => {
    const messages: Array<{ type: string }> = [];
    for await (const m of stream) messages.push(m);
    return messages;
  })();
  return { task: (first.value as { task: Task }).task, rest };
}

// One service for the tests that need no fresh one (each uses Tasks of its own); a client each, as
// before: one that listed the tools validates results against their output schemas.
const svc = await startTestService(t);

t.test('tools/list and the capabilities say which tools run as MCP tasks', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  t.match(mcp.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const { tools } = await mcp.listTools();
  const supported = tools.filter((x) => x.execution?.taskSupport === 'optional').map((x) => x.name).sort();
  t.same(supported, ['shell', 'stream_task', 'submit', 'wait_task']);
  await t.rejects(mcp.experimental.tasks.getTask('taskyard-run:bm9wZQ'), /Task not found/);
});

t.test('a task-augmented submit is an MCP task backed by the Task run, through to its result', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { task, rest } = await startTask(mcp, 'submit', { task: 'sleep', seconds: 0.6, steps: 2 });
  t.equal(task.status, 'working');
  t.equal(task.ttl, null, 'kept as long as the Task record');
  const messages = await rest;
  const result = messages.at(-1) as { type: string; result: CallToolResult };
  t.equal(result.type, 'result', JSON.stringify(messages));
  const status = (result.result.structuredContent as { answer: TaskStatus }).answer;
  t.equal(status.state, 'succeeded', 'the result is the terminal TaskStatus');
  t.same((await svc.call('status', { task_id: status.task_id })).body.answer, status, 'the same record the service keeps');
  t.equal((await mcp.experimental.tasks.getTask(task.taskId)).status, 'completed');
  const listed = await mcp.experimental.tasks.listTasks();
  t.ok(listed.tasks.some((x) => x.taskId === task.taskId), 'tasks/list shows it');
});

t.test("a client that listed the tools accepts a task-augmented submit's result (the run's TaskStatus) against submit's outputSchema", async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { tools } = await mcp.listTools(); // the SDK client now validates every result of a tool against its outputSchema
  t.ok(tools.find((x) => x.name === 'submit')?.outputSchema, 'submit has an outputSchema');
  const { rest } = await startTask(mcp, 'submit', { task: 'sleep', seconds: 0.2 });
  const last = (await rest).at(-1) as { type: string; result?: CallToolResult; error?: Error };
  t.equal(last.type, 'result', `the result, not a validation error: ${last.error?.message ?? ''}`);
  t.match(last.result?.structuredContent, { success: true, answer: { state: 'succeeded' } });
  // A plain submit still answers its TaskHandle, which the same schema accepts.
  const plain = await mcp.callTool({ name: 'submit', arguments: { task: 'sleep', seconds: 0.1 } });
  t.match(plain.structuredContent, { success: true, answer: { task_id: /^base#sleep#/ } });
  const { task_id, run_id } = (plain.structuredContent as { answer: { task_id: string; run_id: string } }).answer;
  await svc.call('wait_task', { task_id, run_id });
});

t.test('tasks/list gives a record another tool wrote without created_at a creation time', async (t) => {
  // TaskStatus allows created_at null; an MCP task must name a creation time (the SDK client
  // refused the whole tasks/list page when one was null).
  const id = 'base#demo#foreign-no-time';
  const dir = join(svc.workspace, 'base', id);
  await mkdir(dir, { recursive: true });
  const status = { task_id: id, run_id: 'run-foreign', task_type: 'base', task_name: 'demo', config: { task_name: 'foreign-no-time', source_tasks: '' }, state: 'succeeded', pid: null, created_at: null, started_at: null, finished_at: '2026-01-02T03:04:05.000Z', steps: [], result: {}, error: '', exit_code: 0, log_path: '' };
  await writeFile(join(dir, 'status.json'), JSON.stringify(status));
  await waitFor(async () => (await svc.call('status', { task_id: id })).body.success, 10_000, 'the service to index the written record');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const listed = await mcp.experimental.tasks.listTasks();
  const foreign = listed.tasks.find((x) => x.statusMessage?.startsWith(`Task ${id}:`));
  t.ok(foreign, 'tasks/list shows the written record');
  t.equal(foreign?.createdAt, '2026-01-02T03:04:05.000Z', 'its first known time stands in for the creation time');
  await rm(dir, { recursive: true, force: true });
});

t.test('tasks/cancel really cancels the Task', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const handle = await submit(svc, { task: 'sleep', seconds: 60 });
  const { task, rest } = await startTask(mcp, 'wait_task', { ...handle });
  await waitFor(async () => (await svc.call('status', { task_id: handle.task_id })).body.answer.state === 'running', 15_000, 'the Task to run');
  const cancelled = await mcp.experimental.tasks.cancelTask(task.taskId);
  t.equal(cancelled.status, 'cancelled');
  t.equal((await svc.call('status', { task_id: handle.task_id })).body.answer.state, 'cancelled', 'the service record says cancelled');
  const messages = await rest;
  t.match(messages.at(-1), { type: 'error' }, 'the stream ends: the task was cancelled');
  await t.rejects(mcp.experimental.tasks.cancelTask(task.taskId), /terminal status: cancelled/);
  const result = await mcp.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  t.match(result.structuredContent, { success: false, answer: { state: 'cancelled', exit_code: 130 } });
});

t.test('shell runs as an MCP task: its result, and tasks/cancel kills the command', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const quick = await startTask(mcp, 'shell', { command: 'echo hi' });
  const messages = await quick.rest;
  t.match(messages.at(-1), { type: 'result', result: { structuredContent: { success: true, answer: { stdout: 'hi\n', exit_code: 0 } } } });
  t.equal((await mcp.experimental.tasks.getTask(quick.task.taskId)).status, 'completed');

  const pidFile = join(svc.workspace, 'task-shell.pid');
  const slow = await startTask(mcp, 'shell', { command: `echo $$ > ${pidFile}; exec sleep 120`, timeout: 200 });
  const pid = await waitFor(async () => Number(await readFile(pidFile, 'utf8').catch(() => '')) || null, 15_000, 'the command to start');
  t.ok(await isAlive(pid), 'the command runs after the POST that started it was answered');
  t.equal((await mcp.experimental.tasks.cancelTask(slow.task.taskId)).status, 'cancelled');
  t.notOk(await isAlive(pid), 'cancel returns once the command is gone');
  t.match((await slow.rest).at(-1), { type: 'error' });
  t.ok((await mcp.experimental.tasks.listTasks()).tasks.some((x) => x.taskId === slow.task.taskId && x.status === 'cancelled'), 'tasks/list shows it');
});

t.test('an MCP task handle survives a restart of the service', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const connect = async (url: string) => {
    const client = new Client({ name: 'taskyard-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${SERVICE_PROCESS_TOKEN}` } } }));
    t.teardown(() => client.close());
    return client;
  };
  // Like a test service: one runner kept warm, not the default two; no GPU probe; no history sampler.
  const config = join(workspace, 'service.json');
  await writeFile(config, JSON.stringify({ service: { runner_pool_size: 1, gpus: 0 }, machine: { history: { enabled: false } } }));
  const first = await startServiceProcess(t, workspace, { config });
  const before = await connect(first.url);
  const created = (await before.request(
    { method: 'tools/call', params: { name: 'submit', arguments: { task: 'sleep', seconds: 120, steps: 120 }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  )) as { task: Task };
  t.equal(created.task.status, 'working');
  // A run is adopted once its worker runs it (a queued one dies with the service that queued it).
  await waitFor(async () => {
    const listed = (await first.call('list_task_statuses')).answer;
    return listed[0]?.state === 'running';
  }, 15_000, 'the Task to run');
  first.child.kill('SIGKILL');
  await exited(first.child);

  const second = await startServiceProcess(t, workspace, { config });
  const after = await connect(second.url);
  const pending = await after.experimental.tasks.getTask(created.task.taskId);
  t.equal(pending.status, 'working', 'the new service knows the pending task');
  // The run outlives the service that started it: the new one cancels it and answers its result.
  t.equal((await after.experimental.tasks.cancelTask(created.task.taskId)).status, 'cancelled', 'tasks/cancel reaches the adopted run');
  const result = await after.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 30_000 });
  t.match(result.structuredContent, { success: false, answer: { state: 'cancelled' } }, 'its result is the terminal TaskStatus of that run');
});
