// Runs on every HTTP front end.
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startTestService, type TestService } from '../helpers/service.js';

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const get = (svc: TestService, path: string, headers: Record<string, string> = {}, method = 'GET') => svc.fetch(`/files?path=${encodeURIComponent(path)}`, { method, headers });

async function workspaceWith(svc: TestService, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(svc.workspace, path, '..'), { recursive: true });
    await writeFile(join(svc.workspace, path), content);
  }
}

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t);

t.test('GET /files streams a workspace file with its type, name and validators', async (t) => {
  await workspaceWith(svc, { 'results/plot.svg': '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'results/données 1.csv': 'a,b\n1,2\n' });
  const res = await get(svc, 'results/plot.svg');
  t.equal(res.status, 200);
  t.equal(await res.text(), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  t.equal(res.headers.get('content-type'), 'image/svg+xml');
  t.equal(res.headers.get('content-length'), '71');
  t.equal(res.headers.get('accept-ranges'), 'bytes');
  t.match(res.headers.get('etag'), /^"[0-9a-f]+-47-[0-9a-f]+"$/);
  t.ok(res.headers.get('last-modified') && !Number.isNaN(Date.parse(res.headers.get('last-modified')!)));
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  t.match(res.headers.get('content-security-policy'), /sandbox/, 'an svg or html opened from here runs no script');
  t.equal(res.headers.get('content-disposition'), `attachment; filename="plot.svg"; filename*=UTF-8''plot.svg`);

  const csv = await get(svc, 'results/données 1.csv');
  t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.equal(csv.headers.get('content-disposition'), `attachment; filename="donn_es 1.csv"; filename*=UTF-8''donn%C3%A9es%201.csv`);

  const head = await get(svc, 'results/plot.svg', {}, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), '71', 'HEAD reports the length');
  t.equal(await head.text(), '');
  const empty = await workspaceWith(svc, { 'empty.bin': '' }).then(() => get(svc, 'empty.bin'));
  t.same([empty.status, empty.headers.get('content-length'), await empty.text()], [200, '0', '']);
});

t.test('GET /files: Range gives 206, 416 past the end, the whole file for several ranges or a stale If-Range', async (t) => {
  await workspaceWith(svc, { 'digits.txt': '0123456789' });
  const part = async (range: string, headers: Record<string, string> = {}) => {
    const res = await get(svc, 'digits.txt', { range, ...headers });
    return [res.status, res.headers.get('content-range'), res.headers.get('content-length'), await res.text()];
  };
  t.same(await part('bytes=2-5'), [206, 'bytes 2-5/10', '4', '2345']);
  t.same(await part('bytes=7-'), [206, 'bytes 7-9/10', '3', '789']);
  t.same(await part('bytes=-3'), [206, 'bytes 7-9/10', '3', '789']);
  t.same(await part('bytes=8-100'), [206, 'bytes 8-9/10', '2', '89'], 'clipped at the end');
  t.same(await part('bytes=-100'), [206, 'bytes 0-9/10', '10', '0123456789']);
  const past = await get(svc, 'digits.txt', { range: 'bytes=10-' });
  t.equal(past.status, 416);
  t.equal(past.headers.get('content-range'), 'bytes */10');
  t.match(await past.json(), { detail: /not satisfiable.*10 bytes/ });
  t.equal((await get(svc, 'digits.txt', { range: 'bytes=-0' })).status, 416);
  t.same(await part('bytes=0-1,4-5'), [200, null, '10', '0123456789'], 'several ranges: the whole file');
  t.same(await part('lines=1-2'), [200, null, '10', '0123456789'], 'an unknown unit is ignored');
  t.same(await part('bytes=5-2'), [200, null, '10', '0123456789'], 'a backwards range is ignored');
  const etag = (await get(svc, 'digits.txt')).headers.get('etag')!;
  t.same(await part('bytes=0-0', { 'if-range': etag }), [206, 'bytes 0-0/10', '1', '0']);
  t.same(await part('bytes=0-0', { 'if-range': '"stale"' }), [200, null, '10', '0123456789'], 'a stale If-Range gets the whole file');
});

t.test('GET /files: If-None-Match and If-Modified-Since give 304; a changed file a new ETag', async (t) => {
  await workspaceWith(svc, { 'model.bin': 'v1' });
  const first = await get(svc, 'model.bin');
  const etag = first.headers.get('etag')!;
  const notModified = await get(svc, 'model.bin', { 'if-none-match': etag });
  t.equal(notModified.status, 304);
  t.equal(notModified.headers.get('etag'), etag);
  t.equal((await get(svc, 'model.bin', { 'if-none-match': `"other", W/${etag}` })).status, 304, 'weak comparison, lists');
  t.equal((await get(svc, 'model.bin', { 'if-modified-since': first.headers.get('last-modified')! })).status, 304);
  t.equal((await get(svc, 'model.bin', { 'if-modified-since': new Date(0).toUTCString() })).status, 200);

  await writeFile(join(svc.workspace, 'model.bin'), 'v2 longer');
  await utimes(join(svc.workspace, 'model.bin'), new Date(), new Date(Date.now() + 5000));
  const changed = await get(svc, 'model.bin', { 'if-none-match': etag });
  t.equal(changed.status, 200);
  t.equal(await changed.text(), 'v2 longer');
  t.not(changed.headers.get('etag'), etag);
});

t.test('GET /files: path safety as preview_file, and the bearer rule', async (t) => {
  await workspaceWith(svc, { 'data/keep.txt': 'keep', 'data/dir/x': 'x' });
  await symlink('/etc/hostname', join(svc.workspace, 'data/outside'));
  await symlink('keep.txt', join(svc.workspace, 'data/inside'));
  await symlink('../.taskyard', join(svc.workspace, 'data/state'));
  execFileSync('mkfifo', [join(svc.workspace, 'data/pipe')]);
  const status = async (path: string) => (await get(svc, path)).status;
  t.equal(await status('data/inside'), 200, 'a link inside the workspace is followed');
  t.equal(await (await get(svc, 'data/inside')).text(), 'keep');
  t.equal(await status('data/outside'), 422, 'a link out of the workspace');
  t.equal(await status('../etc/passwd'), 422);
  t.equal(await status('/etc/passwd'), 422);
  t.equal(await status('.taskyard/token'), 403, 'the private state');
  t.equal(await status('data/state/token'), 403, 'the private state through a link');
  t.equal(await status('data/dir'), 422, 'a directory');
  t.equal(await status('data/pipe'), 403, 'not a regular file');
  t.equal(await status('data/missing.txt'), 404);
  const missing = await svc.fetch('/files');
  t.equal(missing.status, 422);
  t.match(await missing.json(), { detail: /path is required/ });
  t.equal((await fetch(`${svc.url}/files?path=data/keep.txt`)).status, 401, 'the token is required');
  t.equal((await get(svc, 'data/keep.txt', { authorization: 'Bearer wrong' })).status, 401);
});

t.test('GET /files: a large file arrives intact, and a client that leaves mid-download stops it', async (t) => {
  // Twelve and a bit of the service's 1 MiB chunks: enough to cycle its buffers and fill the socket.
  const data = randomBytes(12 * 1024 * 1024 + 123);
  await workspaceWith(svc, { 'big.bin': data });
  const res = await get(svc, 'big.bin');
  t.equal(res.headers.get('content-length'), String(data.length));
  t.equal(sha(new Uint8Array(await res.arrayBuffer())), sha(data));
  const tail = await get(svc, 'big.bin', { range: `bytes=${data.length - 2_000_000}-` });
  t.equal(tail.status, 206);
  t.equal(sha(new Uint8Array(await tail.arrayBuffer())), sha(data.subarray(data.length - 2_000_000)));

  // Concurrent downloads share the service's chunk buffers: each must still get its own bytes.
  const starts = [0, 1_000_003, 3_777_777, 7_000_000];
  const bodies = await Promise.all(starts.map(async (start) => new Uint8Array(await (await get(svc, 'big.bin', { range: `bytes=${start}-` })).arrayBuffer())));
  bodies.forEach((body, i) => t.equal(sha(body), sha(data.subarray(starts[i]!)), `concurrent download from ${starts[i]} intact`));

  const reader = (await get(svc, 'big.bin')).body!.getReader();
  await reader.read();
  await reader.cancel();
  t.equal((await svc.fetch('/health')).status, 200, 'the service carries on');
});
