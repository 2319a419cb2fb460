import { mkdir, readdir, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';
import { put } from './fixtures.js';

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
  const svc = await startTestService(t);
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
  const svc = await startTestService(t);
  await mkdir(join(svc.workspace, 'd'));
  t.equal((await svc.call('delete_entries', { paths: [] })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: Array.from({ length: 201 }, (_, i) => `f${i}`) })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: Array.from({ length: 200 }, (_, i) => `f${i}`) })).status, 200);
  t.equal((await svc.call('delete_entries', { paths: 'd' })).status, 422);
  t.equal((await svc.call('delete_entries', { paths: ['d'], force: true })).status, 422);
  t.equal((await svc.call('delete_entries', {})).status, 422);
});

t.test('delete_entries over SSE and MCP', async (t) => {
  const svc = await startTestService(t);
  await put(svc.workspace, 'x.txt', 'x');
  await put(svc.workspace, 'y.txt', 'y');
  const sse = await svc.events('delete_entries', { paths: ['x.txt'] });
  t.same(sse.events, [{ kind: 'result', answer: [{ deleted: 'x.txt', kind: 'file' }], success: true, metadata: {} }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'delete_entries', arguments: { paths: ['y.txt'] } });
  t.same(result.structuredContent, { answer: [{ deleted: 'y.txt', kind: 'file' }], success: true, metadata: {} });
  t.notOk(existsSync(join(svc.workspace, 'y.txt')));
});
