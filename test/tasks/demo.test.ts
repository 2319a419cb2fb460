import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isObject } from '../../core/is-object.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTaskService, submitOk, waitTask, type Handle } from './task-helpers.js';

const dirOf = (workspace: string, id: string) => join(workspace, id.split('#')[0]!, id);

// One service for every test: each works on Tasks of its own.
const shared = startTaskService(t);

t.test('demo over JSON: result, branch, operands, metadata, status', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'demo', x: 2, y: 3 });
  t.match(handle.task_id, /^base#demo#[A-Za-z0-9-]{1,32}$/, 'anonymous Task ID');
  t.equal(handle.task, 'demo');
  t.notOk('task_name' in handle, 'the handle has no task_name');
  const { success, status } = await waitTask(svc, handle);
  t.equal(success, true);
  t.equal(status.state, 'succeeded');
  t.equal(status.exit_code, 0);
  t.equal(status.task_type, 'base');
  t.equal(status.task_name, 'demo', 'task_name holds the registration name');
  t.same(status['result'], { result: 5, branch: 'different', operands: ['x', 'y'], artifacts: {} });
  t.same(status['config'], { x: 2, y: 3, fail: false, task_name: handle.task_id.split('#')[2], source_tasks: '' });
  t.equal(status['log_path'], `base/${handle.task_id}/task.log`);
  const dir = dirOf(svc.workspace, handle.task_id);
  const metadata = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8')) as Record<string, unknown>;
  t.same(Object.keys(metadata).sort(), ['created_at', 'input_params', 'output_params', 'reg_name', 'task_id', 'task_type']);
  t.equal(metadata['reg_name'], 'demo');
  t.same(metadata['output_params'], status['result'], 'result equals metadata output_params');
  t.match(readFileSync(join(dir, 'task.log'), 'utf8'), /demo: x=2 y=3/);

  const again = await svc.call('status', { task_id: handle.task_id });
  t.same(again.body.answer, status);
  const equal = await submitOk(t, svc, { task: 'demo', x: 4, y: 4 });
  const equalResult = (await waitTask(svc, equal)).status['result'] as { branch: string; result: number };
  t.same([equalResult.branch, equalResult.result], ['equal', 8], 'x = y takes the "equal" branch');
});

t.test('demo failure: failed, RuntimeError, exit 1, no metadata; wait_task answers the status object', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, fail: true });
  const { success, status } = await waitTask(svc, handle);
  t.equal(success, false);
  t.equal(typeof status, 'object', 'the answer is the TaskStatus, not a string');
  t.equal(status.state, 'failed');
  t.equal(status.error, 'RuntimeError: Demo failure requested');
  t.equal(status.exit_code, 1);
  t.same(status['result'], {});
  t.notOk(existsSync(join(dirOf(svc.workspace, handle.task_id), 'metadata.json')), 'no metadata on failure');
  const stream = await svc.call('stream_task', { task_id: handle.task_id });
  t.equal(stream.body.success, false, 'stream_task success follows exit_code');
  t.equal(stream.body.answer.state, 'failed');
});

t.test('submit over SSE emits progress then the TaskHandle; MCP submit and wait', async (t) => {
  const svc = await shared;
  const sse = await svc.events('submit', { task: 'demo', x: 2, y: 3 });
  t.equal(sse.status, 200);
  t.same(sse.events.map((e) => e['kind']), ['progress', 'result']);
  const result = sse.events[1]!;
  t.equal(result['success'], true);
  const handle = sse.result!.answer;
  t.same(Object.keys(handle).sort(), ['run_id', 'task', 'task_id']);
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');

  const mcp = await connectMcp(t, svc.url, svc.token);
  const submitted = await mcp.callTool({ name: 'submit', arguments: { task: 'demo', x: 10, y: 5 } });
  t.equal(submitted.isError, false);
  const mcpHandle = (submitted.structuredContent as { answer: Handle }).answer;
  const waited = await mcp.callTool({ name: 'wait_task', arguments: { task_id: mcpHandle.task_id, run_id: mcpHandle.run_id } });
  t.equal(waited.isError, false);
  t.equal(((waited.structuredContent as { answer: { result: { result: number } } }).answer.result.result), 15);
  const failedRun = await mcp.callTool({ name: 'submit', arguments: { task: 'demo', x: 1, y: 1, fail: true } });
  const failedHandle = (failedRun.structuredContent as { answer: Handle }).answer;
  const failedWait = await mcp.callTool({ name: 'wait_task', arguments: { task_id: failedHandle.task_id, run_id: failedHandle.run_id } });
  t.equal(failedWait.isError, true, 'a failed Task is an MCP error result');
  t.equal((failedWait.structuredContent as { answer: { state: string } }).answer.state, 'failed');
});

t.test('validation: unknown task, bad inputs, names and source_tasks, schema violations', async (t) => {
  const svc = await shared;
  const before = (await svc.call('list_task_ids')).body.answer;
  const unknown = await svc.call('submit', { task: 'nope' });
  t.equal(unknown.body.success, false);
  t.match(unknown.body.answer, /^ValueError: .*nope.*Available tasks: command, demo, sleep/);
  const badType = await svc.call('submit', { task: 'demo', x: 'two', y: 3 });
  t.match(badType.body.answer, /^ValidationError: .*\bx: must be integer/);
  const missing = await svc.call('submit', { task: 'demo', x: 1 });
  t.match(missing.body.answer, /y/);
  const extra = await svc.call('submit', { task: 'demo', x: 1, y: 2, colour: 'red' });
  t.match(extra.body.answer, /colour: Extra inputs are not permitted/);
  for (const name of ['has space', 'x'.repeat(33), 'under_score']) {
    const res = await svc.call('submit', { task: 'demo', x: 1, y: 2, task_name: name });
    t.equal(res.body.answer, `ValidationError: task_name must be 1-32 letters, digits or hyphens; got ${JSON.stringify(name)}`, `task_name ${JSON.stringify(name)} is refused, the rule said once`);
  }
  const bad = await svc.call('submit', { task: 'demo', x: 1, y: 2, source_tasks: 'not-an-id' });
  t.match(bad.body.answer, /^ValueError: source_tasks: "not-an-id" is not a valid Task ID/);
  const dup = await svc.call('submit', { task: 'demo', x: 1, y: 2, source_tasks: 'base#demo#a, base#demo#a' });
  t.match(dup.body.answer, /^ValueError: source_tasks: duplicate Task ID base#demo#a/);
  const list = await svc.call('list_task_ids');
  t.same(list.body.answer, before, 'nothing was written by refused submissions');

  const normalized = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, task_name: '', source_tasks: ' base#demo#a ,base#demo#b ' });
  const status = (await waitTask(svc, normalized)).status;
  t.equal((status['config'] as { source_tasks: string }).source_tasks, 'base#demo#a,base#demo#b', 'items trimmed and rejoined');
  t.not((status['config'] as { task_name: string }).task_name, '', 'empty task_name generates a name');

  t.equal((await svc.call('wait_task', { task_id: 'base#demo#x' })).status, 422, 'wait_task without run_id is a 422');
  t.equal((await svc.call('wait_task', { task_id: 'a', run_id: 'b', extra: 1 })).status, 422, 'wait_task accepts only its fields');
  t.equal((await svc.call('read_task_log', { task_id: 'a', limit: 10 })).status, 422, 'log limit below 1024');
  t.equal((await svc.call('delete_tasks', { task_ids: [] })).status, 422, 'delete_tasks needs one ID');
  const unknownStatus = await svc.call('status', { task_id: 'base#demo#nothing' });
  t.match(unknownStatus.body.answer, /^KeyError: /);
  t.match((await svc.call('wait_task', { task_id: 'base#demo#nothing', run_id: 'r' })).body.answer, /^KeyError: /);
});

t.test('definitions over JSON, SSE and MCP', async (t) => {
  const svc = await shared;
  const list = await svc.call('list_installed_task_definitions');
  const defs = list.body.answer;
  t.same(defs.map((d) => d.name), ['command', 'demo', 'sleep'], 'with a token, the built-in command Task is listed');
  const demo = defs.find((d) => d.name === 'demo')!;
  t.equal(demo.source, 'native');
  t.equal(demo.plugin, null);
  t.equal(demo.task_type, 'base');
  const inputs = demo.input_schema['properties'];
  if (!isObject(inputs)) throw new Error(`the input schema has no properties: ${JSON.stringify(demo.input_schema)}`);
  t.ok(inputs['task_name'] && inputs['source_tasks'], 'base inputs added');
  t.equal(demo.input_schema['additionalProperties'], false);
  const one = await svc.events('get_task_definition', { task: 'sleep' });
  t.equal(one.result!.answer.name, 'sleep');
  const missing = await svc.call('get_task_definition', { task: 'base#demo#x' });
  t.match(missing.body.answer, /^ValueError: Unknown task/);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const tools = (await mcp.listTools()).tools.map((tool) => tool.name);
  for (const name of ['submit', 'wait_task', 'stream_task', 'cancel', 'delete_tasks', 'get_task_context']) t.ok(tools.includes(name), `${name} is an MCP tool`);
  const viaMcp = await mcp.callTool({ name: 'list_installed_task_definitions', arguments: {} });
  t.same((viaMcp.structuredContent as { answer: unknown }).answer, defs);
});
