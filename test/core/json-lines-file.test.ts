import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { JsonLinesFile } from '../../supervisor/common/json-lines-file.js';

async function scratch(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-jsonl-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the audit log is appended in batches and rotated by size, keeping `keep` old files', async (t) => {
  const dir = await scratch(t);
  const path = join(dir, 'audit.jsonl');
  const log = await JsonLinesFile.open(path, 4096, 2);
  const pad = 'x'.repeat(80);
  for (let i = 0; i < 200; i++) {
    log.append({ i, pad });
    if (i % 10 === 9) await nextTurn(); // ten calls per turn of the event loop: one write each
  }
  await log.close();
  t.ok(existsSync(`${path}.1`) && existsSync(`${path}.2`), 'rotated twice at least');
  t.notOk(existsSync(`${path}.3`), 'no more than keep=2 old files');
  for (const file of [path, `${path}.1`, `${path}.2`]) t.ok((await stat(file)).size <= 4096, `${file} stays under max_bytes`);
  const lines = (await Promise.all([`${path}.2`, `${path}.1`, path].map((f) => readFile(f, 'utf8')))).join('').split('\n').filter((l) => l !== '');
  const seq = lines.map((l) => (JSON.parse(l) as { i: number }).i);
  t.equal(seq.at(-1), 199, 'the newest record is in the current file');
  t.same(seq, Array.from({ length: seq.length }, (_, k) => 200 - seq.length + k), 'whole lines, in order, none torn or repeated');
  t.equal((await stat(path)).mode & 0o777, 0o600, 'readable by the service user only');
});

t.test('a link planted where the log goes is refused, not written through', async (t) => {
  const dir = await scratch(t);
  const target = join(dir, 'elsewhere');
  await writeFile(target, 'untouched\n');
  await symlink(target, join(dir, 'audit.jsonl'));
  await t.rejects(JsonLinesFile.open(join(dir, 'audit.jsonl')), { code: 'ELOOP' });
  t.equal(await readFile(target, 'utf8'), 'untouched\n');
});
