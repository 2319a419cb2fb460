// Runs on every HTTP front end.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startTestService, type TestService } from '../helpers/service.js';
import { tmpfsUnavailable } from '../helpers/tmpfs.js';

const sha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

function upload(svc: TestService, body: string | Uint8Array, headers: Record<string, string>) {
  return svc.fetch('/files', { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body });
}

t.test('a very long x-file-directory is a 422, not a 500', async (t) => {
  const svc = await startTestService(t);
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
  const svc = await startTestService(t);
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
