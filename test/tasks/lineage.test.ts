import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/service.js';
import { makeWorkspace, startTaskService, submitOk, waitState, waitTask } from './task-helpers.js';
import type { TaskGraph } from '../../schemas/tasks.js';


const GHOST = 'base#demo#ghost';

async function writeRecord(workspace: string, id: string, file: string, value: unknown): Promise<void> {
  const dir = join(workspace, id.split('#')[0]!, id);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), typeof value === 'string' ? value : JSON.stringify(value));
}

/** Writes thousands of status records before the service starts: one blocking call each is far cheaper than awaiting each. */
function writeStatuses(workspace: string, ids: string[], record: (id: string) => unknown): void {
  mkdirSync(join(workspace, 'base'), { recursive: true });
  for (const id of ids) {
    mkdirSync(join(workspace, 'base', id));
    writeFileSync(join(workspace, 'base', id, 'status.json'), JSON.stringify(record(id)));
  }
}

t.test('graph and context of a three-level lineage with a missing parent', async (t) => {
  const svc = await startTaskService(t);
  const a = await submitOk(t, svc, { task: 'demo', x: 1, y: 1, task_name: 'lin-a' });
  await waitTask(svc, a);
  const b = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, task_name: 'lin-b', source_tasks: a.task_id });
  await waitTask(svc, b);
  const c = await submitOk(t, svc, { task: 'demo', x: 2, y: 2, task_name: 'lin-c', source_tasks: `${b.task_id}, ${GHOST}` });
  await waitTask(svc, c);
  const d = await submitOk(t, svc, { task: 'sleep', seconds: 60, task_name: 'lin-d', source_tasks: c.task_id });
  await waitState(svc, d.task_id, 'running');

  const graph = (await svc.call('get_task_graph', { task_id: c.task_id })).body.answer;
  t.equal(graph.selected_id, c.task_id);
  t.equal(graph.root_id, a.task_id);
  t.same(new Set(graph.nodes.map((n) => n.task_id)), new Set([a.task_id, b.task_id, c.task_id, GHOST, d.task_id]));
  const node = (id: string) => graph.nodes.find((n) => n.task_id === id)!;
  t.same(node(c.task_id).parent_ids, [b.task_id, GHOST]);
  t.same([node(GHOST).missing, node(GHOST).state, node(GHOST).kind], [true, null, 'base']);
  t.same([node(d.task_id).provisional, node(d.task_id).state], [true, 'running']);
  t.same([node(a.task_id).missing, node(a.task_id).provisional, node(a.task_id).state, node(a.task_id).task_name], [false, false, 'succeeded', 'demo']);
  t.same(
    graph.edges.map((e) => `${e.source}>${e.target}`).sort(),
    [`${a.task_id}>${b.task_id}`, `${b.task_id}>${c.task_id}`, `${GHOST}>${c.task_id}`, `${c.task_id}>${d.task_id}`].sort(),
  );

  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'get_task_context', arguments: { task_id: c.task_id } });
  const context = (viaMcp.structuredContent as { answer: Record<string, unknown> }).answer;
  t.equal(context['task_id'], c.task_id);
  t.equal((context['status'] as { state: string }).state, 'succeeded');
  t.equal(context['metadata_exists'], true);
  t.equal(context['metadata_path'], `base/${c.task_id}/metadata.json`);
  t.equal(context['log_path'], `base/${c.task_id}/task.log`);
  t.same(context['relations'], {
    direct_upstream: [b.task_id, GHOST],
    ancestors: [b.task_id, GHOST, a.task_id],
    direct_downstream: [d.task_id],
    missing: [GHOST],
    provisional: [d.task_id],
  });
  const sse = await svc.events('get_task_graph', { task_id: a.task_id });
  const fromRoot = sse.result!.answer;
  t.same(fromRoot.nodes.map((n) => n.task_id), [a.task_id, b.task_id, c.task_id, d.task_id], 'descendants of the root');
  t.match((await svc.call('get_task_graph', { task_id: GHOST })).body.answer, /^KeyError: /);
  t.equal((await svc.call('cancel', { task_id: d.task_id })).body.answer, true);
});

t.test('a fan-out answer of several pieces is whole, and the same over JSON, SSE and MCP', async (t) => {
  const workspace = await makeWorkspace(t);
  // IDs as long as the rules allow (a 64-character registration name, a 32-character task name),
  // so that a graph of over 1 MiB takes 2,000 records rather than 5,000.
  const registration = `demo-${'r'.repeat(59)}`;
  const source = `base#${registration}#fan-source-${'s'.repeat(21)}`;
  const ghost = `base#${registration}#ghost-${'g'.repeat(26)}`;
  const at = '2026-01-01T00:00:00.000Z';
  const record = (id: string, sources: string) => ({ task_id: id, run_id: `r-${id}`, task_type: 'base', task_name: registration, config: { x: 1, y: 1, task_name: id.split('#')[2], source_tasks: sources }, state: 'succeeded', created_at: at, log_path: `base/${id}/task.log` });
  const children = Array.from({ length: 2000 }, (_, i) => `base#${registration}#fan-${String(i).padStart(4, '0')}-${'c'.repeat(23)}`);
  writeStatuses(workspace, [source], (id) => record(id, ''));
  writeStatuses(workspace, children, (id) => record(id, `${source},${ghost}`));
  const svc = await startTaskService(t, { workspace });

  const json = (await svc.call('get_task_context', { task_id: source })).body;
  t.equal(json.success, true);
  t.ok(Buffer.byteLength(JSON.stringify(json)) > 1 << 20, 'the answer is over 1 MiB: written in more than one piece');
  const context = json.answer;
  t.equal(context.status.run_id, `r-${source}`);
  t.equal(context.graph.nodes.length, 2001, 'the source and every child');
  t.same(context.graph.nodes.map((n) => n.task_id), [source, ...children], 'the source, then its children in order');
  t.equal(context.graph.edges.length, 2000, 'one edge per child; the missing co-source is outside this graph');
  t.same(context.graph.edges[1999], { source, target: children[1999] });
  t.same(context.relations['direct_downstream'], children);
  t.same(context.graph.nodes[1]!.parent_ids, [source, ghost]);

  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'get_task_context', arguments: { task_id: source } });
  t.same((viaMcp.structuredContent as { answer: unknown }).answer, context, 'MCP answers the same value');
  const sse = await svc.events('get_task_graph', { task_id: children[7]! });
  const graph = sse.result!.answer;
  t.same(graph.nodes.map((n) => n.task_id), [ghost, source, children[7]], 'a child: its two parents, then itself');
  t.same(graph.edges, [{ source, target: children[7] }, { source: ghost, target: children[7] }]);
  t.equal(graph.root_id, ghost);
});

t.test('non-ASCII record text comes out byte for byte as JSON.stringify writes it, over JSON, SSE and MCP; a change is seen at once', async (t) => {
  const workspace = await makeWorkspace(t);
  const source = 'base#demo#utf-source';
  const at = '2026-01-01T00:00:00.000Z';
  // é (2 bytes), ☕ (3), 🚀 (a surrogate pair, 4), U+2028 (raw in JSON text) and a lone surrogate (escaped).
  const note = 'café ☕ 🚀 \u2028 \ud800 tag:é🚀';
  const record = (id: string, sources: string) => ({ task_id: id, run_id: `r-${id}`, task_type: 'base', task_name: 'demo', config: { x: 1, y: 1, note, source_tasks: sources }, state: 'succeeded', created_at: at, log_path: `base/${id}/task.log` });
  // About 300 KB of graph: several pieces (64 KiB, 128 KiB, then larger), the non-ASCII head in the first.
  const children = Array.from({ length: 1000 }, (_, i) => `base#demo#utf-${String(i).padStart(4, '0')}`);
  writeStatuses(workspace, [source], (id) => record(id, ''));
  writeStatuses(workspace, children, (id) => record(id, source));
  const svc = await startTaskService(t, { workspace });

  const res = await svc.fetch('/jobs/get_task_context', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: source } }) });
  const bytes = Buffer.from(await res.arrayBuffer());
  const body = JSON.parse(bytes.toString('utf8')) as { answer: { status: { config: { note: string } }; graph: TaskGraph } };
  t.equal(body.answer.status.config.note, note, 'the note as written');
  t.equal(body.answer.graph.nodes.length, 1001);
  t.ok(bytes.length > 3 << 16, `the answer (${bytes.length} bytes) takes at least three pieces`);
  t.ok(bytes.equals(Buffer.from(JSON.stringify(body))), 'the answer is byte-identical to JSON.stringify of its value');
  const sse = await svc.events('get_task_context', { task_id: source });
  const data = sse.raw.split('\n').find((line) => line.startsWith('data: {"kind":"result"'))!.slice('data: '.length);
  t.equal(data, JSON.stringify({ kind: 'result', ...body }), 'the SSE result is the same text');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'get_task_context', arguments: { task_id: source } });
  t.same((viaMcp.structuredContent as { answer: unknown }).answer, body.answer, 'MCP answers the same value');

  // A lineage is reused while the index is unchanged, and built again once a record changes.
  const late = 'base#demo#utf-late';
  await writeRecord(workspace, late, 'status.json', record(late, source));
  const graph = async () => (await svc.call('get_task_graph', { task_id: source })).body.answer;
  await waitFor(async () => (await graph()).nodes.some((n) => n.task_id === late), 5000, 'the new child in the graph');
  t.same((await graph()).edges.at(-1), { source, target: late }, 'its edge too');
});

t.test('delete_tasks: terminal and metadata-only only; tolerant reading of bad records', async (t) => {
  const workspace = await makeWorkspace(t);
  const meta = 'base#demo#meta-only';
  await writeRecord(workspace, meta, 'metadata.json', { task_id: meta, reg_name: 'demo', created_at: '2026-01-01T00:00:00.000Z', task_type: 'base', input_params: { x: 1, y: 1, source_tasks: '' }, output_params: { result: 2 } });
  await writeRecord(workspace, 'base#demo#broken', 'status.json', '{not json');
  await writeRecord(workspace, 'base#demo#wrong-id', 'status.json', { task_id: 'base#demo#other', run_id: 'r', task_type: 'base' });
  const legacy = 'base#demo#legacy';
  await writeRecord(workspace, legacy, 'status.json', { task_id: legacy, execution_id: 'old-run', task_type: 'base', state: 'succeeded', created_at: '2026-01-02T00:00:00.000Z' });
  await symlink(join(workspace, 'base', legacy), join(workspace, 'base', 'base#demo#linked'));
  const svc = await startTaskService(t, { workspace });

  t.same((await svc.call('list_task_ids')).body.answer, [legacy], 'bad, foreign, symlinked and metadata-only records are not listed');
  const status = (await svc.call('status', { task_id: legacy })).body.answer;
  t.equal(status['run_id'], 'old-run', 'execution_id is read as run_id');
  t.notOk('execution_id' in status);
  t.same([status['exit_code'], status['steps'], status['error']], [0, [], ''], 'defaults filled');
  t.match((await svc.call('status', { task_id: meta })).body.answer, /^KeyError: .*metadata/);
  t.match((await svc.call('status', { task_id: 'base#demo#broken' })).body.answer, /^KeyError: /);

  const done = await submitOk(t, svc, { task: 'demo', x: 1, y: 1, task_name: 'done-1' });
  await waitTask(svc, done);
  const active = await submitOk(t, svc, { task: 'sleep', seconds: 60, task_name: 'active-1' });
  await waitState(svc, active.task_id, 'running');
  const res = await svc.call('delete_tasks', { task_ids: [active.task_id, done.task_id, 'base#demo#unknown', 'not an id', meta] });
  t.same(res.body, { answer: [done.task_id, meta], success: true, metadata: {} }, 'only terminal and metadata-only Tasks are deleted');
  t.match((await svc.call('status', { task_id: done.task_id })).body.answer, /^KeyError: /);
  t.same((await svc.call('delete_tasks', { task_ids: [done.task_id] })).body.answer, [], 'nothing left to delete');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'delete_tasks', arguments: { task_ids: [legacy] } });
  t.same((viaMcp.structuredContent as { answer: string[] }).answer, [legacy]);
  t.same((await svc.call('list_task_ids')).body.answer, [active.task_id]);
  t.equal((await svc.call('cancel', { task_id: active.task_id })).body.answer, true);
});

t.test('the index follows Task directories added or removed behind its back', async (t) => {
  const svc = await startTaskService(t);
  const done = await submitOk(t, svc, { task: 'demo', x: 1, y: 1, task_name: 'outside-1' });
  await waitTask(svc, done);
  await rm(join(svc.workspace, 'base', done.task_id), { recursive: true });
  await waitFor(async () => (await svc.call('list_task_ids')).body.answer.length === 0, 5000, 'the removed Task to disappear');
  t.pass('a directory removed outside the Jobs disappears');
  const synced = 'synced#demo#from-elsewhere';
  await writeRecord(svc.workspace, synced, 'status.json', { task_id: synced, run_id: 'r1', task_type: 'synced', state: 'succeeded', created_at: '2026-01-01T00:00:00.000Z' });
  await waitFor(async () => (await svc.call('list_task_ids')).body.answer.includes(synced), 5000, 'the new type and Task to appear');
  t.pass('a Task directory of a new type written outside the Jobs appears');
  const late = 'base#demo#late-record';
  await mkdir(join(svc.workspace, 'base', late));
  await svc.call('list_task_ids');
  await writeRecord(svc.workspace, late, 'metadata.json', { task_id: late, reg_name: 'demo', created_at: '2026-01-01T00:00:00.000Z', task_type: 'base', input_params: {}, output_params: {} });
  await waitFor(async () => (await svc.call('get_task_graph', { task_id: late })).body.success, 5000, 'the late record to appear');
  t.pass('a directory whose record is written after it was created appears');
});
