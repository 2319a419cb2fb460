import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeWorkspace, runToEnd, type Status } from './task-helpers.js';
import type { TaskStatusPage } from '../../schemas/tasks.js';

/** Finished demo records written straight to disk, some sharing a created_at (the ID breaks the tie). */
async function writeRecords(workspace: string, count: number, state = 'succeeded'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `hist-${String(i).padStart(4, '0')}`;
    const id = `${i % 3 === 0 ? 'other' : 'base'}#${i % 2 ? 'demo' : 'alt'}#${name}`;
    ids.push(await writeRecord(workspace, id, { state, created_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString() }));
  }
  return ids;
}

/** Writes one status.json the way the service does (temp file, then rename). */
async function writeRecord(workspace: string, id: string, fields: Record<string, unknown>): Promise<string> {
  const [type, registration, name] = id.split('#') as [string, string, string];
  const dir = join(workspace, type, id);
  await mkdir(dir, { recursive: true });
  const status = {
    task_id: id, run_id: `run-${name}`, task_type: type, task_name: registration, config: { x: 1, y: 2, task_name: name, source_tasks: '' },
    state: 'succeeded', pid: null, created_at: null, started_at: null, finished_at: null, steps: [], result: { name }, error: '', exit_code: 0, log_path: '',
    ...fields,
  };
  await writeFile(join(dir, 'status.json.tmp'), JSON.stringify(status));
  await rename(join(dir, 'status.json.tmp'), join(dir, 'status.json'));
  return id;
}

/** The spec's order: created_at, then task_id, both descending. */
function sorted(statuses: Status[]): Status[] {
  const key = (s: Status) => `${String(s['created_at'] ?? '')}\u0000${s.task_id}`;
  return [...statuses].sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
}

async function list(svc: TestService): Promise<Status[]> {
  const { status, body } = await svc.call('list_task_statuses');
  if (status !== 200 || !body.success) throw new Error(`list_task_statuses answered ${status}: ${JSON.stringify(body).slice(0, 200)}`);
  return body.answer;
}

async function query(svc: TestService, args: Record<string, unknown>): Promise<TaskStatusPage> {
  const { body } = await svc.call('query_task_statuses', args);
  if (!body.success) throw new Error(`query_task_statuses failed: ${String(body.answer)}`);
  return body.answer;
}

t.test('list_task_statuses streams every status in order, the same over HTTP JSON, SSE and MCP', async (t) => {
  const workspace = await makeWorkspace(t);
  const ids = await writeRecords(workspace, 700);
  const svc = await startTestService(t, { workspace });
  const res = await svc.fetch('/jobs/list_task_statuses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"arguments":{}}' });
  t.equal(res.headers.get('content-length'), null, 'written as it is produced (no Content-Length)');
  const body = (await res.json()) as { answer: Status[]; success: boolean; metadata: unknown };
  t.same({ success: body.success, metadata: body.metadata }, { success: true, metadata: {} });
  t.equal(body.answer.length, ids.length);
  t.same(body.answer.map((s) => s.task_id), sorted(body.answer).map((s) => s.task_id), 'created_at, then task_id, descending');
  t.same(new Set(body.answer.map((s) => s.task_id)), new Set(ids));

  const sse = await svc.events('list_task_statuses');
  t.equal(sse.events.length, 1);
  t.same(sse.events[0], { kind: 'result', ...body });

  const mcp = await connectMcp(t, svc.url, svc.token);
  const tool = await mcp.callTool({ name: 'list_task_statuses', arguments: {} });
  t.same(tool.structuredContent, body);
});

t.test('the order follows submits and deletes without a full re-sort', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeRecords(workspace, 300);
  const svc = await startTestService(t, { workspace });
  const before = await list(svc);
  const handle = await runToEnd(t, svc, { task: 'demo', x: 1, y: 2 });
  const victim = before[100]!.task_id;
  t.same((await svc.call('delete_tasks', { task_ids: [victim] })).body.answer, [victim]);
  const after = await list(svc);
  t.equal(after[0]!.task_id, handle.task_id, 'the newest Task comes first');
  t.notOk(after.some((s) => s.task_id === victim), 'the deleted Task is gone');
  t.same(after.map((s) => s.task_id), sorted(after).map((s) => s.task_id));
  t.equal(after.length, before.length);
});

t.test('a restart reads the index file and notices what changed while the service was down', async (t) => {
  const workspace = await makeWorkspace(t);
  const ids = await writeRecords(workspace, 200);
  const first = await startTestService(t, { workspace });
  t.equal((await list(first)).length, 200);
  await first.close();
  const indexFile = join(workspace, '.taskyard', 'task-index');
  t.ok((await stat(indexFile)).size > 200 * 100, 'the index file is written at stop');
  t.match(await readFile(indexFile, 'utf8'), ids[5]!);

  const changed = ids[10]!;
  await writeRecord(workspace, changed, { state: 'failed', error: 'changed while down', created_at: '2026-01-01T00:00:05.000Z' });
  const removed = ids[20]!;
  const [rtype] = removed.split('#') as [string];
  await rm(join(workspace, rtype, removed), { recursive: true });
  const added = await writeRecord(workspace, 'base#demo#added-later', { created_at: '2027-01-01T00:00:00.000Z' });
  // A finished record of the index file rewritten as a run (by another service) while this one was down.
  const rerun = await writeRecord(workspace, ids[30]!, { state: 'running', pid: 2 ** 22 + 9, created_at: '2026-01-01T00:00:15.000Z', started_at: '2026-06-01T00:00:00.000Z' });
  const lost = await writeRecord(workspace, 'base#demo#was-running', { state: 'running', pid: 2 ** 22 + 7, created_at: '2026-06-01T00:00:00.000Z', started_at: '2026-06-01T00:00:00.000Z' });

  const second = await startTestService(t, { workspace });
  const listed = await list(second);
  t.equal(listed.length, 201);
  t.equal(listed[0]!.task_id, added, 'a record added while down is listed');
  t.notOk(listed.some((s) => s.task_id === removed), 'a record removed while down is gone');
  t.match(listed.find((s) => s.task_id === changed), { state: 'failed', error: 'changed while down' }, 'a record rewritten while down is re-read');
  t.match(listed.find((s) => s.task_id === lost), { state: 'failed' }, 'a run left running is settled as lost');
  t.match(listed.find((s) => s.task_id === rerun), { state: 'failed' }, 'so is a run found by the check of the index file');
  t.same(listed.map((s) => s.task_id), sorted(listed).map((s) => s.task_id));
  t.match((await second.call('status', { task_id: ids[50]! })).body, { success: true, answer: { task_id: ids[50], state: 'succeeded' } });
});

t.test('a damaged byte in the index file costs a re-read of that record, never invalid JSON', async (t) => {
  const workspace = await makeWorkspace(t);
  const ids = await writeRecords(workspace, 60);
  const first = await startTestService(t, { workspace });
  const expected = await list(first);
  await first.close();
  const indexFile = join(workspace, '.taskyard', 'task-index');
  const lines = (await readFile(indexFile, 'utf8')).split('\n');
  /** Replaces the first `from` after `after` in the line of `id` (one byte each time). */
  const flip = (id: string, after: string, from: string, to: string) => {
    const n = lines.findIndex((line) => line.includes(JSON.stringify(id)));
    const line = lines[n]!;
    const at = line.indexOf(from, line.indexOf(after) + 1);
    t.ok(n > 0 && at > 0 && from.length === 1 && to.length === 1, `a byte to flip for ${id}`);
    lines[n] = line.slice(0, at) + to + line.slice(at + 1);
  };
  flip(ids[7]!, '"result"', ':', ';'); // the status is no longer JSON
  flip(ids[8]!, '"result"', 'h', 'H'); // still JSON, but not what status.json says
  flip(ids[9]!, '[', '2', '3'); // a digit of the head (its stamp or created_at)
  await writeFile(indexFile, lines.join('\n'));

  for (const round of ['after the damage', 'after one more restart']) {
    const svc = await startTestService(t, { workspace });
    t.same(await list(svc), expected, `${round}: list_task_statuses answers valid JSON, as on disk`);
    for (const id of ids.slice(7, 10)) {
      t.match((await svc.call('status', { task_id: id })).body, { success: true, answer: { task_id: id, result: { name: id.split('#')[2] } } }, `${round}: status of ${id}`);
      t.match((await svc.call('get_task_context', { task_id: id })).body, { success: true, answer: { task_id: id } }, `${round}: get_task_context of ${id}`);
    }
    await svc.close();
  }
  t.notMatch(await readFile(indexFile, 'utf8'), /"result";/, 'the index file was written again without the damage');
});

t.test('query_task_statuses: filters, pages and changes since a version', async (t) => {
  const workspace = await makeWorkspace(t);
  const ids = await writeRecords(workspace, 120);
  const svc = await startTestService(t, { workspace });
  const all = await list(svc);

  const pages: Status[] = [];
  let cursor: string | undefined;
  let first: TaskStatusPage | undefined;
  do {
    const page = await query(svc, { limit: 25, ...(cursor ? { cursor } : {}) });
    first ??= page;
    pages.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  t.same(pages.map((s) => s.task_id), all.map((s) => s.task_id), 'the pages together are the listing');
  t.equal(first!.total, 120);

  const filtered = await query(svc, { task_type: 'other', registration: 'demo', limit: 1000 });
  const expected = all.filter((s) => s.task_id.startsWith('other#demo#'));
  t.same(filtered.items.map((s) => s.task_id), expected.map((s) => s.task_id), 'task_type and registration');
  t.equal(filtered.total, expected.length);
  const window = await query(svc, { created_after: '2026-01-01T00:00:10Z', created_before: '2026-01-01T00:00:20.000Z', limit: 1000 });
  t.same(window.items.map((s) => s.task_id), all.filter((s) => String(s['created_at']) > '2026-01-01T00:00:10.000Z' && String(s['created_at']) < '2026-01-01T00:00:20.000Z').map((s) => s.task_id), 'created window');
  t.same((await query(svc, { id_contains: 'HIST-0042' })).items.map((s) => s.task_id), [ids[42]], 'text in the ID, any case');
  const pagedFilter = await query(svc, { task_type: 'base', limit: 10 });
  const secondPage = await query(svc, { task_type: 'base', limit: 10, cursor: pagedFilter.next_cursor });
  t.same([...pagedFilter.items, ...secondPage.items].map((s) => s.task_id), all.filter((s) => s.task_type === 'base').slice(0, 20).map((s) => s.task_id), 'a filtered page continues');

  const running = await query(svc, { state: ['running', 'queued'] });
  t.same(running.items, [], 'nothing is running yet');
  const handle = await runToEnd(t, svc, { task: 'demo', x: 1, y: 2 });
  const victim = ids[7]!;
  await svc.call('delete_tasks', { task_ids: [victim] });
  const delta = await query(svc, { changed_since: first!.version });
  t.same(delta.items.map((s) => s.task_id), [handle.task_id], 'only what changed');
  t.same(delta.deleted, [victim], 'and what was deleted');
  t.equal(delta.total, null);
  t.not(delta.version, first!.version);
  const quiet = await query(svc, { changed_since: delta.version });
  t.same({ items: quiet.items, deleted: quiet.deleted, version: quiet.version }, { items: [], deleted: [], version: delta.version }, 'nothing since');
  const noLongerRunning = await query(svc, { state: ['running'], changed_since: first!.version });
  t.same(noLongerRunning.items, []);
  t.ok(noLongerRunning.deleted.includes(handle.task_id), 'a Task that left the filter is among the IDs to drop');

  const rows = await query(svc, { changed_since: first!.version, fields: ['state', 'created_at'] });
  const whole = delta.items[0]!;
  t.same(rows.items, [{ task_id: whole.task_id, state: whole.state, created_at: whole['created_at'] }], 'fields: task_id and those fields only');
  const storedRows = await query(svc, { id_contains: 'hist-0042', fields: ['result', 'task_type'] });
  t.same(storedRows.items, [{ task_id: ids[42], result: { name: 'hist-0042' }, task_type: 'other' }], 'also of a record read from disk');
  t.equal((await svc.call('query_task_statuses', { fields: ['colour'] })).status, 422, 'an unknown field');
  t.equal((await svc.call('query_task_statuses', { fields: ['state', 'state'] })).status, 422, 'a field twice');

  const stale = await query(svc, { changed_since: 'abc.12', limit: 5 });
  t.match(stale, { reset: true, total: 120 });
  t.equal(stale.items.length, 5, 'an unknown version answers a first page');
  t.match((await svc.call('query_task_statuses', { cursor: 'nonsense' })).body, { success: false, answer: /^ValueError: cursor is not a next_cursor/ });
  t.equal((await svc.call('query_task_statuses', { state: ['sleeping'] })).status, 422);
  t.equal((await svc.call('query_task_statuses', { limit: 0 })).status, 422);

  const sse = await svc.events('query_task_statuses', { id_contains: 'hist-0042' });
  t.match(sse.events.at(-1), { kind: 'result', success: true, answer: { items: [{ task_id: ids[42] }] } });
  const mcp = await connectMcp(t, svc.url, svc.token);
  const tool = await mcp.callTool({ name: 'query_task_statuses', arguments: { id_contains: 'hist-0042' } });
  t.match(tool.structuredContent, { success: true, answer: { items: [{ task_id: ids[42] }], total: 1 } });
});
