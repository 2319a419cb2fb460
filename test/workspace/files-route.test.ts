// Runs on every HTTP front end.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { tmpfsUnavailable } from '../helpers/tmpfs.js';
import { put, snapshotTree } from './fixtures.js';
import { rawConnection, rawExchange, writeChunk } from './raw-http.js';

const LIMIT = 1024 * 1024;
const sha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const config = { service: { upload_limit_bytes: LIMIT } };

function upload(svc: TestService, body: string | Uint8Array, headers: Record<string, string>) {
  return svc.fetch('/files', { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body });
}

/** Nothing of a failed upload may stay: no part file, nothing staged. */
async function stagingIsEmpty(svc: TestService): Promise<boolean> {
  const parts = await readdir(join(svc.workspace, '.taskyard/uploads')).catch(() => []);
  return parts.length === 0 && !existsSync(join(svc.workspace, 'tmp'));
}

// Two services serve the tests that need no fresh one: one at the 1 MiB limit, one at 64 MiB for
// the large bodies. Every test starts from an empty staging area (tmp/), as with a service of its
// own; each leaves no part file behind (they check it). Tests that start with a workspace of their
// own (the sweep at start, the full disk) or change the whole root (path attacks) keep their own.
const small = await startTestService(t, { config });
const large = await startTestService(t, { config: { service: { upload_limit_bytes: 64 * 1024 * 1024 } } });
t.beforeEach(async () => {
  for (const svc of [small, large]) await rm(join(svc.workspace, 'tmp'), { recursive: true, force: true });
});

t.test('POST /files stages by checksum, idempotently', async (t) => {
  const svc = small;
  const digest = sha('hello world');
  const res = await upload(svc, 'hello world', { 'x-file-name': 'greeting.txt' });
  t.equal(res.status, 200);
  t.same(await res.json(), { success: true, metadata: {}, answer: { path: `tmp/${digest}/greeting.txt`, sha256: digest, size: 11 } });
  t.equal(await readFile(join(svc.workspace, 'tmp', digest, 'greeting.txt'), 'utf8'), 'hello world');
  const again = await upload(svc, 'hello world', { 'x-file-name': 'greeting.txt' });
  t.equal(again.status, 200, 'same content and name is idempotent');
  t.same(((await again.json()) as { answer: unknown }).answer, { path: `tmp/${digest}/greeting.txt`, sha256: digest, size: 11 });

  const nested = await upload(svc, 'hello world', { 'x-file-name': encodeURIComponent('données 100%.txt'), 'x-file-directory': 'tmp/plugins/v1' });
  t.same(((await nested.json()) as { answer: unknown }).answer, { path: `tmp/plugins/v1/${digest}/données 100%.txt`, sha256: digest, size: 11 });
  const empty = await upload(svc, '', { 'x-file-name': 'empty' });
  t.same(((await empty.json()) as { answer: unknown }).answer, { path: `tmp/${sha('')}/empty`, sha256: sha(''), size: 0 });
  t.same(await readdir(join(svc.workspace, '.taskyard/uploads')), [], 'no part files left');
});

t.test('POST /files: large bodies arrive intact (many chunks, several writes in flight, chunk memory reused)', async (t) => {
  const svc = large;
  // Two at once, then a third: the front end's reused chunk memory must never mix uploads or
  // be overwritten while a write of it is still in flight.
  const send = async (data: Buffer, name: string) => {
    const res = await upload(svc, data, { 'x-file-name': name });
    const answer = ((await res.json()) as { answer: { path: string; sha256: string; size: number } }).answer;
    t.same([answer.sha256, answer.size], [sha(data), data.length], `${name}: hash and size`);
    t.ok((await readFile(join(svc.workspace, answer.path))).equals(data), `${name}: the staged bytes equal the sent bytes`);
  };
  await Promise.all([send(randomBytes(20 * 1024 * 1024), 'first.bin'), send(randomBytes(20 * 1024 * 1024), 'second.bin')]);
  await send(randomBytes(12 * 1024 * 1024), 'third.bin');
});

t.test('POST /files: 409 for links and different content at the destination', async (t) => {
  const svc = small;
  const digest = sha('payload');
  await mkdir(join(svc.workspace, 'tmp', digest), { recursive: true });
  await writeFile(join(svc.workspace, 'tmp', digest, 'taken.bin'), 'other content');
  await symlink('/etc/hostname', join(svc.workspace, 'tmp', digest, 'link.bin'));
  await mkdir(join(svc.workspace, 'elsewhere'));
  await symlink(join(svc.workspace, 'elsewhere'), join(svc.workspace, 'tmp', 'linked-dir'));
  for (const [headers, why] of [
    [{ 'x-file-name': 'taken.bin' }, 'different content'],
    [{ 'x-file-name': 'link.bin' }, 'symlink destination'],
    [{ 'x-file-name': 'a.bin', 'x-file-directory': 'tmp/linked-dir' }, 'symlinked directory'],
  ] as const) {
    const res = await upload(svc, 'payload', headers);
    t.equal(res.status, 409, why);
    t.type(((await res.json()) as { detail: unknown }).detail, 'string');
  }
  t.equal(await readFile(join(svc.workspace, 'tmp', digest, 'taken.bin'), 'utf8'), 'other content');
  t.same(await readdir(join(svc.workspace, 'elsewhere')), [], 'nothing written through the link');
});

t.test('POST /files: 422 for names and directories', async (t) => {
  const svc = small;
  const cases: Array<Record<string, string>> = [
    {},
    { 'x-file-name': '' },
    { 'x-file-name': '..' },
    { 'x-file-name': 'a/b' },
    { 'x-file-name': 'a%2Fb' },
    { 'x-file-name': '..%2F..%2Fescape' },
    { 'x-file-name': 'a\\b' },
    { 'x-file-name': 'bad%zz' },
    { 'x-file-name': 'nul%00.txt' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': 'other' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': 'tmpfoo' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': '../tmp' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': '/tmp' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': 'tmp/../../x' },
    { 'x-file-name': 'ok.txt', 'x-file-directory': '.taskyard' },
  ];
  for (const headers of cases) t.equal((await upload(svc, 'data', headers)).status, 422, JSON.stringify(headers));
  t.ok(await stagingIsEmpty(svc));
});

t.test('POST /files: 413 by Content-Length and by streamed count, 400 on bad length', async (t) => {
  const svc = small;
  const exact = await upload(svc, new Uint8Array(LIMIT), { 'x-file-name': 'exact.bin' });
  t.equal(exact.status, 200, 'exactly the limit is accepted');
  const over = await upload(svc, new Uint8Array(LIMIT + 1), { 'x-file-name': 'over.bin' });
  t.equal(over.status, 413, 'an announced length over the limit: 413, read by a client that sends its whole body first');

  const auth = `Authorization: Bearer ${svc.token}`;
  const announced = await rawExchange(svc.url, `POST /files HTTP/1.1\nHost: 127.0.0.1\n${auth}\nx-file-name: big.bin\nContent-Length: ${LIMIT * 100}\n`);
  t.equal(announced?.status, 413, 'an announced length over the limit is refused before reading');

  // Chunked, no length announced: refused once the count passes the limit, without reading the rest.
  let sent = 0;
  const chunked = await rawExchange(svc.url, `POST /files HTTP/1.1\nHost: 127.0.0.1\n${auth}\nx-file-name: stream.bin\nTransfer-Encoding: chunked\n`, async (socket, answered) => {
    const chunk = Buffer.alloc(64 * 1024, 1);
    while (!answered() && sent < LIMIT * 64) {
      if (!(await writeChunk(socket, `${chunk.length.toString(16)}\r\n`)) || !(await writeChunk(socket, chunk)) || !(await writeChunk(socket, '\r\n'))) break;
      sent += chunk.length;
    }
  });
  t.equal(chunked?.status, 413);
  t.equal(chunked?.headers['connection'], 'close');
  t.ok(sent < LIMIT * 64, `the service answered before the whole body was sent (${sent} bytes sent)`);

  for (const length of ['abc', '-1', '1.5', '5, 6']) {
    const bad = await rawExchange(svc.url, `POST /files HTTP/1.1\nHost: 127.0.0.1\n${auth}\nx-file-name: x.bin\nContent-Length: ${length}\n\nhello`);
    // uWS's parser drops such a request without answering; node:http's answers 400 itself.
    if (svc.adapter === 'uws') t.equal(bad, null, `Content-Length ${length}: connection closed, nothing staged`);
    else t.equal(bad?.status, 400, `Content-Length ${length}`);
  }
  await waitFor(async () => (await readdir(join(svc.workspace, '.taskyard/uploads'))).length === 0, 5000, 'part files removed');
  t.same((await readdir(join(svc.workspace, 'tmp'))).length, 1, 'only the accepted upload is staged');
});

t.test('POST /files: an answer given before a large body was read leaves the connection usable', async (t) => {
  const svc = large;
  const conn = await rawConnection(svc.url);
  t.teardown(() => conn.close());
  const body = Buffer.alloc(16 * 1024 * 1024, 7);
  // No x-file-name: 422 before a byte of the body is read; the body keeps coming regardless.
  const refused = await conn.send(`POST /files HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer ${svc.token}\nContent-Length: ${body.length}\n`, body);
  t.equal(refused, 422);
  t.equal(await conn.send(`GET /health HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer ${svc.token}\n`), 200, 'the next request on the same connection is answered');
  t.ok(await stagingIsEmpty(svc));
});

t.test('POST /files: a connection closing before the announced length leaves nothing', async (t) => {
  const svc = small;
  const parts = join(svc.workspace, '.taskyard/uploads');
  const head = `POST /files HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer ${svc.token}\nx-file-name: cut.bin\nContent-Length: 500000\n`;
  const response = await rawExchange(svc.url, head, async (socket) => {
    await writeChunk(socket, Buffer.alloc(100_000, 7));
    // The upload is under way once its part file exists; then the client goes away.
    await waitFor(async () => (await readdir(parts).catch(() => [])).length === 1, 5000, 'part file');
    socket.destroy();
  });
  t.equal(response, null, 'no response to a vanished client');
  await waitFor(() => stagingIsEmpty(svc), 5000, 'part file removed');
  t.ok(await stagingIsEmpty(svc));
});

t.test('DELETE /files removes staged files only; repeating is harmless', async (t) => {
  const svc = small;
  const staged = ((await (await upload(svc, 'bye', { 'x-file-name': 'bye.txt' })).json()) as { answer: { path: string } }).answer.path;
  const remove = (query: string) => svc.fetch(`/files${query}`, { method: 'DELETE' });
  const res = await remove(`?path=${encodeURIComponent(staged)}`);
  t.equal(res.status, 200);
  t.same(await res.json(), { success: true, metadata: {}, answer: { path: staged } });
  t.notOk(existsSync(join(svc.workspace, staged)));
  t.notOk(existsSync(join(svc.workspace, staged, '..')), 'the emptied checksum directory is gone too');
  t.equal((await remove(`?path=${encodeURIComponent(staged)}`)).status, 200, 'a repeated cleanup is harmless');

  await mkdir(join(svc.workspace, 'data'));
  await writeFile(join(svc.workspace, 'data/keep.txt'), 'keep');
  const digest = sha('x');
  await mkdir(join(svc.workspace, 'tmp', digest, 'dir'), { recursive: true });
  for (const query of ['', '?path=', '?path=/etc/passwd', '?path=..%2Fx', '?path=data%2Fkeep.txt', '?path=tmp%2Fx', `?path=tmp/${digest}/../../data/keep.txt`, `?path=tmp/${digest}/dir`]) {
    t.equal((await remove(query)).status, 422, `DELETE /files${query}`);
  }
  t.ok(existsSync(join(svc.workspace, 'data/keep.txt')));
  t.equal((await svc.fetch('/files', { method: 'PUT' })).status, 405);
  t.equal((await svc.fetch('/files/other', { method: 'POST' })).status, 404);
  t.equal((await fetch(`${svc.url}/files?path=${encodeURIComponent(staged)}`, { method: 'DELETE' })).status, 401, 'the token is required');
});

t.test('a very long x-file-directory is a 422, not a 500', async (t) => {
  const svc = small;
  const segment = 'd'.repeat(250);
  for (const count of [5, 20, 40]) {
    const res = await upload(svc, 'x', { 'x-file-name': 'f.txt', 'x-file-directory': ['tmp', ...Array(count).fill(segment)].join('/') });
    t.equal(res.status, 422, `${count} segments of 250 bytes`);
    t.match(await res.json(), { detail: /x-file-directory is too long/ });
  }
  const fits = await upload(svc, 'x', { 'x-file-name': 'f.txt', 'x-file-directory': `tmp/${segment}/${segment}` });
  t.equal(fits.status, 200, 'a long directory that fits is staged');
  t.same(await readdir(join(svc.workspace, '.taskyard/uploads')), [], 'no part files left');
});

t.test('part files no live upload owns are swept at start, whatever their age', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-parts-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const parts = join(workspace, '.taskyard/uploads');
  await mkdir(parts, { recursive: true });
  await writeFile(join(parts, '0123456789abcdef01234567.part'), Buffer.alloc(1024 * 1024, 1));
  await startTestService(t, { workspace });
  t.same(await readdir(parts), [], 'the fresh part file of a killed process is gone');
});

t.test('uploads racing delete_entries(["tmp"]) never answer 500', async (t) => {
  const svc = small;
  const statuses = new Map<number, number>();
  for (let round = 0; round < 150; round++) {
    const body = `round ${round}`;
    const [res] = await Promise.all([
      upload(svc, body, { 'x-file-name': 'race.txt', 'x-file-directory': 'tmp/a/b/c' }),
      svc.call('delete_entries', { paths: ['tmp'] }),
    ]);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status === 200) t.equal(((await res.json()) as { answer: { sha256: string } }).answer.sha256, sha(body));
    else await res.body?.cancel();
  }
  t.same([...statuses.keys()], [200], `every upload was staged (${JSON.stringify(Object.fromEntries(statuses))})`);
});

/** A 2 MiB tmpfs as the workspace, when this process may mount one (root); null otherwise. */
async function smallDisk(t: Test): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir]).status === 0;
  t.teardown(async () => {
    if (mounted) spawnSync('umount', ['-l', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return mounted ? dir : null;
}

t.test('a full disk answers 507 and leaves nothing behind', { skip: tmpfsUnavailable() }, async (t) => {
  const workspace = await smallDisk(t);
  if (!workspace) {
    t.comment('skipped: cannot mount a small tmpfs here (needs root)');
    return;
  }
  const svc = await startTestService(t, { workspace });
  const res = await upload(svc, Buffer.alloc(4 * 1024 * 1024, 3), { 'x-file-name': 'big.bin' });
  t.equal(res.status, 507);
  t.match(await res.json(), { detail: /disk is full/ });
  t.same(await readdir(join(workspace, '.taskyard/uploads')), [], 'no part file left');
  t.notOk(existsSync(join(workspace, 'tmp')), 'nothing staged');
  const small = await upload(svc, 'still works', { 'x-file-name': 'small.txt' });
  t.equal(small.status, 200, 'the disk is usable again at once');
});

const SECRET = 'OUTSIDE-SECRET-7f3a';

t.test('path attacks against the /files routes change nothing outside', async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'taskyard-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await put(outside, 'victim.txt', SECRET);
  const svc = small;
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
