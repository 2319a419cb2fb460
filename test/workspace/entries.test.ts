import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { memoryDir } from '../helpers/memory-dir.js';
import { startTestService } from '../helpers/service.js';
import { put } from './fixtures.js';

// One service for the tests that read or delete only names of their own; a test that lists or
// reads back the whole workspace root starts its own.
// Its workspace is in memory: one test writes 5,005 files there.
const shared = await startTestService(t, { workspace: await memoryDir(t, 'taskyard-entries-') });

t.test('list_entries: directories first, then by name; entry fields; private dir hidden', async (t) => {
  const svc = await startTestService(t);
  const ws = svc.workspace;
  await put(ws, 'b.csv', 'a\n1\n');
  await put(ws, 'A.md', '# x');
  await put(ws, 'zeta/x.txt', 'x');
  await put(ws, 'alpha/y.txt', 'y');
  await put(ws, 'image.png', new Uint8Array(10));
  await put(ws, '.taskyard/secret', 'token');
  await symlink(join(ws, 'zeta'), join(ws, 'link-dir'));
  await symlink('/etc', join(ws, 'etc-link'));
  await symlink(join(ws, 'b.csv'), join(ws, 'link-file.csv'));
  await symlink(join(ws, '.taskyard'), join(ws, 'private-link'));

  const res = await svc.call('list_entries', {});
  t.equal(res.status, 200);
  const listing = res.body.answer;
  t.equal(listing.path, '');
  t.equal(listing.truncated, false);
  t.same(listing.entries.map((e) => e.name), ['alpha', 'link-dir', 'zeta', 'A.md', 'b.csv', 'etc-link', 'image.png', 'link-file.csv', 'private-link']);
  const byName = new Map(listing.entries.map((e) => [e.name, e]));
  t.match(byName.get('b.csv'), { path: 'b.csv', kind: 'file', preview_kind: 'csv', supported: true, size: 4 });
  t.match(byName.get('alpha'), { kind: 'directory', preview_kind: null, supported: false, size: null });
  t.match(byName.get('image.png'), { kind: 'file', preview_kind: 'unsupported', supported: false, size: 10 });
  t.match(byName.get('link-file.csv'), { kind: 'file', preview_kind: 'csv', size: 4 });
  t.match(byName.get('etc-link'), { kind: 'symlink', supported: false, size: null });
  t.match(byName.get('private-link'), { kind: 'symlink', supported: false });
  for (const e of listing.entries) t.ok(!Number.isNaN(Date.parse(e.modified_at)), `${e.name} modified_at is a date`);

  const sub = (await svc.call('list_entries', { path: 'link-dir/' })).body.answer;
  t.same(sub, { path: 'link-dir', truncated: false, entries: [{ ...sub.entries[0], name: 'x.txt', path: 'link-dir/x.txt' }] });
  t.same((await svc.call('list_entries', { path: 'nope' })).body.answer, 'FileNotFoundError: no such directory: nope');
  t.same((await svc.call('list_entries', { path: 'b.csv' })).body.answer, 'NotADirectoryError: not a directory: b.csv');
  t.equal((await svc.call('list_entries', { path: 'x', depth: 2 })).status, 422);
});

t.test('list_entries: at most 5000 entries, truncated, directories kept first', async (t) => {
  const svc = shared;
  const dir = join(svc.workspace, 'many');
  await mkdir(join(dir, 'zz-dir'), { recursive: true });
  // Written synchronously: 5,005 awaited writes cost this process more than the listing under test.
  for (let i = 0; i < 5005; i++) writeFileSync(join(dir, `f${String(i).padStart(5, '0')}.txt`), '');
  const listing = (await svc.call('list_entries', { path: 'many' })).body.answer;
  t.equal(listing.entries.length, 5000);
  t.equal(listing.truncated, true);
  t.equal(listing.entries[0]?.name, 'zz-dir');
  t.equal(listing.entries[1]?.name, 'f00000.txt');
  t.equal(listing.entries[4999]?.name, 'f04998.txt');
});

t.test('list_task_runs: task directories with metadata.json only', async (t) => {
  const svc = shared;
  const ws = svc.workspace;
  await put(ws, 'base/base#demo#run-b/metadata.json', '{}');
  await put(ws, 'base/base#demo#run-a/metadata.json', '{}');
  await put(ws, 'base/base#demo#running/status.json', '{}');
  await put(ws, 'base/stray/metadata.json', '{}');
  await mkdir(join(ws, 'base/base#demo#linked'), { recursive: true });
  await symlink('/etc/hostname', join(ws, 'base/base#demo#linked/metadata.json'));
  await put(ws, 'base/base#demo#file', 'not a dir');

  const res = await svc.call('list_task_runs', { task_type: 'base' });
  const listing = res.body.answer;
  t.equal(listing.path, 'base');
  t.same(listing.entries.map((e) => [e.name, e.path, e.kind]), [
    ['base#demo#run-a', 'base/base#demo#run-a', 'directory'],
    ['base#demo#run-b', 'base/base#demo#run-b', 'directory'],
  ]);
  t.same((await svc.call('list_task_runs', { task_type: 'other' })).body.answer, { path: 'other', entries: [], truncated: false });
  for (const task_type of ['', '../base', '.taskyard', '-x', 'a/b']) {
    t.equal((await svc.call('list_task_runs', { task_type })).status, 422, `task_type ${JSON.stringify(task_type)}`);
  }
  t.equal((await svc.call('list_task_runs', {})).status, 422);

  const sse = await svc.events('list_task_runs', { task_type: 'base' });
  t.same(sse.events.at(-1), { kind: 'result', ...res.body });
  const mcp = await connectMcp(t, svc.url, svc.token);
  t.same((await mcp.callTool({ name: 'list_task_runs', arguments: { task_type: 'base' } })).structuredContent, res.body);
});

t.test('list_entries over SSE and MCP', async (t) => {
  const svc = shared;
  await put(svc.workspace, 'one.txt', '1');
  const json = await svc.call('list_entries', {});
  const sse = await svc.events('list_entries', {});
  t.same(sse.events, [{ kind: 'result', ...json.body }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'list_entries', arguments: {} });
  t.same(result.structuredContent, json.body);
  t.equal(result.isError, false);
});

t.test('delete_entries: files, directories, links themselves; missing skipped', async (t) => {
  const svc = await startTestService(t);
  const ws = svc.workspace;
  await put(ws, 'a.txt', 'a');
  await put(ws, 'dir/sub/b.txt', 'b');
  await put(ws, 'keep/target.txt', 'keep');
  await symlink(join(ws, 'keep/target.txt'), join(ws, 'link.txt'));
  await symlink(join(ws, 'keep'), join(ws, 'dir-link'));

  const res = await svc.call('delete_entries', { paths: ['a.txt', 'dir', 'link.txt', 'dir-link', 'missing.txt', './a.txt'] });
  t.same(res.body, {
    success: true,
    metadata: {},
    answer: [
      { deleted: 'a.txt', kind: 'file' },
      { deleted: 'dir', kind: 'directory' },
      { deleted: 'link.txt', kind: 'file' },
      { deleted: 'dir-link', kind: 'file' },
    ],
  });
  t.same((await readdir(ws)).filter((n) => n !== '.taskyard'), ['keep']);
  t.ok(existsSync(join(ws, 'keep/target.txt')), 'a link target is never deleted');
  t.same((await svc.call('delete_entries', { paths: ['missing'] })).body.answer, [], 'no effect is an empty answer');
});

t.test('delete_entries: root, private dir and escapes refuse the whole batch', async (t) => {
  const svc = shared;
  const ws = svc.workspace;
  await put(ws, 'a.txt', 'a');
  await put(ws, '.taskyard/token', 'secret');
  for (const [path, answer] of [
    ['', 'PermissionError: the workspace root cannot be deleted'],
    ['.', 'PermissionError: the workspace root cannot be deleted'],
    ['x/..', 'PermissionError: the workspace root cannot be deleted'],
    ['.taskyard', 'PermissionError: path is private to the service: .taskyard'],
    ['.taskyard/token', 'PermissionError: path is private to the service: .taskyard/token'],
    ['../x', 'PermissionError: path escapes the workspace: ../x'],
  ]) {
    const res = await svc.call('delete_entries', { paths: ['a.txt', path!] });
    t.same(res.body, { success: false, metadata: {}, answer }, `refuses ${JSON.stringify(path)}`);
    t.ok(existsSync(join(ws, 'a.txt')), 'nothing of the batch was deleted');
  }
  t.ok(existsSync(join(ws, '.taskyard/token')));
});

t.test('delete_entries: batch size 1-200 and schema', async (t) => {
  const svc = shared;
  await mkdir(join(svc.workspace, 'd'));
  t.equal((await svc.call('delete_entries', { paths: [] })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: Array.from({ length: 201 }, (_, i) => `f${i}`) })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: Array.from({ length: 200 }, (_, i) => `f${i}`) })).status, 200);
  t.equal((await svc.call('delete_entries', { paths: 'd' })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: ['d'], force: true })).status, 422);
  t.equal((await svc.call('delete_entries', {})).status, 422);
});

t.test('delete_entries over SSE and MCP', async (t) => {
  const svc = shared;
  await put(svc.workspace, 'x.txt', 'x');
  await put(svc.workspace, 'y.txt', 'y');
  const sse = await svc.events('delete_entries', { paths: ['x.txt'] });
  t.same(sse.events, [{ kind: 'result', answer: [{ deleted: 'x.txt', kind: 'file' }], success: true, metadata: {} }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'delete_entries', arguments: { paths: ['y.txt'] } });
  t.same(result.structuredContent, { answer: [{ deleted: 'y.txt', kind: 'file' }], success: true, metadata: {} });
  t.notOk(existsSync(join(svc.workspace, 'y.txt')));
});
