// Runs on every HTTP front end.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { put, snapshotTree } from './fixtures.js';

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
  const unicode = (await svc.call('list_entries', { path: 'ünï' })).body.answer as { entries: Array<{ path: string }> };
  t.same(unicode.entries.map((e) => e.path), ['ünï/日本語.txt']);
  t.match((await svc.call('preview_file', { path: 'ünï/日本語.txt' })).body.answer, { kind: 'text', content: 'こんにちは' });
  t.same((await svc.call('delete_entries', { paths: ['ünï/日本語.txt'] })).body.answer, [{ deleted: 'ünï/日本語.txt', kind: 'file' }]);

  t.equal(await snapshotTree(outside), before, 'nothing outside the workspace changed');
  t.equal(await privateTree(), privateBefore, 'the private directory is untouched');
  t.ok(existsSync('/etc/passwd'));
});

t.test('path attacks against the /files routes change nothing outside', async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'taskyard-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await put(outside, 'victim.txt', SECRET);
  const svc = await startTestService(t);
  const ws = svc.workspace;
  const digest = createHash('sha256').update('x').digest('hex');
  await mkdir(join(ws, 'tmp'), { recursive: true });
  await symlink(outside, join(ws, 'tmp', 'out-link'));
  await symlink(outside, join(ws, 'tmp', digest));
  const before = await snapshotTree(outside);

  const upload = (headers: Record<string, string>) => svc.fetch('/files', { method: 'POST', headers, body: 'x' });
  const uploads: Array<[Record<string, string>, number, string]> = [
    [{ 'x-file-name': '..' }, 422, 'dot-dot name'],
    [{ 'x-file-name': '%2e%2e%2fvictim.txt' }, 422, 'encoded dot-dot name'],
    [{ 'x-file-name': encodeURIComponent(join(outside, 'victim.txt')) }, 422, 'absolute name'],
    [{ 'x-file-name': 'a%00b' }, 422, 'NUL in name'],
    [{ 'x-file-name': 'v.txt', 'x-file-directory': 'tmp/../..' }, 422, 'directory escape'],
    [{ 'x-file-name': 'v.txt', 'x-file-directory': 'tmp/%2e%2e/%2e%2e' }, 422, 'encoded directory escape'],
    [{ 'x-file-name': 'v.txt', 'x-file-directory': encodeURIComponent(outside) }, 422, 'absolute directory'],
    [{ 'x-file-name': 'v.txt', 'x-file-directory': 'tmp/a%00b' }, 422, 'NUL in directory'],
    [{ 'x-file-name': 'v.txt', 'x-file-directory': 'tmp/out-link' }, 409, 'symlinked directory'],
    [{ 'x-file-name': 'victim.txt' }, 409, 'checksum directory is a symlink'],
  ];
  for (const [headers, status, why] of uploads) t.equal((await upload(headers)).status, status, `POST /files: ${why}`);

  const removals: Array<[string, string]> = [
    [`tmp/${digest}/victim.txt`, 'checksum directory is a symlink to outside'],
    [join(outside, 'victim.txt'), 'absolute path'],
    [`tmp/${digest}/../../../victim.txt`, 'dot-dot escape'],
    [`tmp/${digest}/a\u0000b`, 'NUL byte'],
    ['.taskyard/token', 'private directory'],
  ];
  for (const [path, why] of removals) {
    t.equal((await svc.fetch(`/files?path=${encodeURIComponent(path)}`, { method: 'DELETE' })).status, 422, `DELETE /files: ${why}`);
  }
  t.equal(await snapshotTree(outside), before, 'nothing outside the workspace changed');
});
