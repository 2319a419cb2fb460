import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { memoryDir } from '../helpers/memory-dir.js';
import { startTestService } from '../helpers/service.js';
import { put, snapshotTree } from './fixtures.js';

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

// Path attacks through the workspace Jobs' arguments (JSON values: the HTTP front end plays no part
// in them, so they run once, here; the /files routes' attacks run on every front end in
// files-route.test.ts). The test changes the whole root: a service of its own.
const SECRET = 'OUTSIDE-SECRET-7f3a';

/**
 * Each client path is tried against every workspace Job. `refused` paths must be answered with a
 * PermissionError; the others are harmless literal names (nothing of that name exists inside).
 */
function attacks(outside: string): Array<{ path: string; refused: boolean; why: string }> {
  return [
    { path: '..', refused: true, why: 'parent of the root' },
    { path: '../outside/victim.txt', refused: true, why: 'dot-dot escape' },
    { path: 'a/../../victim.txt', refused: true, why: 'dot-dot after a component' },
    { path: 'a/b/../../../../etc/passwd', refused: true, why: 'deep dot-dot' },
    { path: '/etc/passwd', refused: true, why: 'absolute path' },
    { path: join(outside, 'victim.txt'), refused: true, why: 'absolute path to the outside file' },
    { path: 'a\u0000b', refused: true, why: 'NUL byte' },
    { path: 'victim.txt\u0000.txt', refused: true, why: 'NUL byte before an extension' },
    { path: 'etc-link', refused: true, why: 'symlink to /etc' },
    { path: 'etc-link/passwd', refused: true, why: 'file below a symlink to /etc' },
    { path: 'out-link/victim.txt', refused: true, why: 'symlink to an outside directory' },
    { path: 'victim-link.txt', refused: true, why: 'symlink to an outside file' },
    { path: 'dangling-out', refused: true, why: 'dangling symlink pointing outside' },
    { path: 'loop-a', refused: true, why: 'symlink loop' },
    { path: 'loop-a/x', refused: true, why: 'below a symlink loop' },
    { path: '.taskyard/token', refused: true, why: 'service-private directory' },
    { path: './.taskyard', refused: true, why: 'service-private directory, dotted' },
    { path: 'private-link/token', refused: true, why: 'symlink into the private directory' },
    { path: '%2e%2e/victim.txt', refused: false, why: 'percent-encoded dot-dot is a literal name in arguments' },
    { path: '..%2fvictim.txt', refused: false, why: 'encoded slash is a literal name' },
    { path: '\uff0e\uff0e/victim.txt', refused: false, why: 'fullwidth dots are not dots' },
    { path: '..\\victim.txt', refused: false, why: 'backslash is not a separator here' },
  ];
}

t.test('path attacks against every workspace Job change nothing outside', async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'taskyard-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await put(outside, 'victim.txt', SECRET);
  await put(outside, 'outside-task#a#b/metadata.json', '{}');
  await put(outside, 'data.csv', `secret\n${SECRET}\n`);
  const svc = await startTestService(t);
  const ws = svc.workspace;
  await put(ws, '.taskyard/token', 'workspace-token');
  await put(ws, 'ünï/日本語.txt', 'こんにちは');
  await symlink('/etc', join(ws, 'etc-link'));
  await symlink(outside, join(ws, 'out-link'));
  await symlink(join(outside, 'victim.txt'), join(ws, 'victim-link.txt'));
  await symlink(join(outside, 'not-yet', 'x'), join(ws, 'dangling-out'));
  await symlink(join(ws, 'loop-b'), join(ws, 'loop-a'));
  await symlink(join(ws, 'loop-a'), join(ws, 'loop-b'));
  await symlink(join(ws, '.taskyard'), join(ws, 'private-link'));
  const before = await snapshotTree(outside);
  // The audit log records every call, refused ones too, by design: all else must stay as it was.
  const privateTree = () => snapshotTree(join(ws, '.taskyard'), [join(ws, '.taskyard', 'audit.jsonl')]);
  const privateBefore = await privateTree();

  for (const { path, refused, why } of attacks(outside)) {
    const answers = await Promise.all([
      svc.call('list_entries', { path }),
      svc.call('preview_file', { path }),
      svc.call('preview_file', { path: `${path}/data.csv` }),
      svc.call('delete_entries', { paths: [path] }),
    ]);
    for (const [i, { status, body }] of answers.entries()) {
      const job = ['list_entries', 'preview_file', 'preview_file (below)', 'delete_entries'][i];
      t.equal(status, 200, `${why}: ${job} answers 200`);
      t.notOk(JSON.stringify(body).includes(SECRET), `${why}: ${job} leaks nothing`);
      if (refused) t.match(body, { success: false, answer: /^PermissionError: / }, `${why}: ${job} refused`);
      else if (job === 'delete_entries') t.same(body, { success: true, metadata: {}, answer: [] }, `${why}: nothing to delete`);
      else t.match(body, { success: false, answer: /^FileNotFoundError: / }, `${why}: ${job} finds nothing`);
    }
  }
  const listing = await svc.call('list_task_runs', { task_type: 'out-link' });
  t.same(listing.body, { success: false, metadata: {}, answer: 'PermissionError: path escapes the workspace: out-link' }, 'task runs are not listed through a link');
  await symlink(ws, join(ws, 'self'));
  for (const path of ['', 'self', 'self/self/']) {
    t.notOk(JSON.stringify((await svc.call('list_entries', { path })).body).includes('.taskyard'), `the private directory is not listed in ${JSON.stringify(path)}`);
  }
  t.match((await svc.call('preview_file', { path: 'self/.taskyard/token' })).body, { success: false, answer: /^PermissionError: path is private/ });

  // Unicode names are ordinary names: listed, previewed, deleted.
  const unicode = (await svc.call('list_entries', { path: 'ünï' })).body.answer;
  t.same(unicode.entries.map((e) => e.path), ['ünï/日本語.txt']);
  t.match((await svc.call('preview_file', { path: 'ünï/日本語.txt' })).body.answer, { kind: 'text', content: 'こんにちは' });
  t.same((await svc.call('delete_entries', { paths: ['ünï/日本語.txt'] })).body.answer, [{ deleted: 'ünï/日本語.txt', kind: 'file' }]);

  t.equal(await snapshotTree(outside), before, 'nothing outside the workspace changed');
  t.equal(await privateTree(), privateBefore, 'the private directory is untouched');
  t.ok(existsSync('/etc/passwd'));
});
