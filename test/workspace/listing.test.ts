import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';
import { put } from './fixtures.js';
import type { WorkspaceEntry, WorkspaceListing } from '../../schemas/workspace.js';


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
  const listing = res.body.answer as WorkspaceListing;
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

  const sub = (await svc.call('list_entries', { path: 'link-dir/' })).body.answer as WorkspaceListing;
  t.same(sub, { path: 'link-dir', truncated: false, entries: [{ ...sub.entries[0], name: 'x.txt', path: 'link-dir/x.txt' }] });
  t.same((await svc.call('list_entries', { path: 'nope' })).body.answer, 'FileNotFoundError: no such directory: nope');
  t.same((await svc.call('list_entries', { path: 'b.csv' })).body.answer, 'NotADirectoryError: not a directory: b.csv');
  t.equal((await svc.call('list_entries', { path: 'x', depth: 2 })).status, 422);
});

t.test('list_entries: at most 5000 entries, truncated, directories kept first', async (t) => {
  const svc = await startTestService(t);
  const dir = join(svc.workspace, 'many');
  await mkdir(join(dir, 'zz-dir'), { recursive: true });
  await Promise.all(Array.from({ length: 5005 }, (_, i) => writeFile(join(dir, `f${String(i).padStart(5, '0')}.txt`), '')));
  const listing = (await svc.call('list_entries', { path: 'many' })).body.answer as WorkspaceListing;
  t.equal(listing.entries.length, 5000);
  t.equal(listing.truncated, true);
  t.equal(listing.entries[0]?.name, 'zz-dir');
  t.equal(listing.entries[1]?.name, 'f00000.txt');
  t.equal(listing.entries[4999]?.name, 'f04998.txt');
});

t.test('list_task_runs: task directories with metadata.json only', async (t) => {
  const svc = await startTestService(t);
  const ws = svc.workspace;
  await put(ws, 'base/base#demo#run-b/metadata.json', '{}');
  await put(ws, 'base/base#demo#run-a/metadata.json', '{}');
  await put(ws, 'base/base#demo#running/status.json', '{}');
  await put(ws, 'base/stray/metadata.json', '{}');
  await mkdir(join(ws, 'base/base#demo#linked'), { recursive: true });
  await symlink('/etc/hostname', join(ws, 'base/base#demo#linked/metadata.json'));
  await put(ws, 'base/base#demo#file', 'not a dir');

  const res = await svc.call('list_task_runs', { task_type: 'base' });
  const listing = res.body.answer as WorkspaceListing;
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
  const svc = await startTestService(t);
  await put(svc.workspace, 'one.txt', '1');
  const json = await svc.call('list_entries', {});
  const sse = await svc.events('list_entries', {});
  t.same(sse.events, [{ kind: 'result', ...json.body }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'list_entries', arguments: {} });
  t.same(result.structuredContent, json.body);
  t.equal(result.isError, false);
});
