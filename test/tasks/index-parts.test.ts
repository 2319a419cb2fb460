import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ChangeLog } from '../../supervisor/tasks/records/change-log.js';
import { readIndexFile, writeIndexFile } from '../../supervisor/tasks/records/index-file.js';
import { statusChunk, statusTexts } from '../../supervisor/tasks/records/status-texts.js';
import { StoredRecord } from '../../supervisor/tasks/records/stored-record.js';
import type { Stamp } from '../../supervisor/tasks/records/task-record.js';
import { compareListed, StatusOrder } from '../../supervisor/tasks/records/status-order.js';
import { parseTaskId } from '../../supervisor/tasks/records/task-ids.js';
import type { TaskRecord } from '../../supervisor/tasks/records/task-record.js';

function stored(i: number, createdAt: string | null, stamp: Stamp | null = { ino: 1, mtimeMs: i + 0.5 }): StoredRecord {
  const id = `base#demo#r-${i}`;
  const text = createdAt === null ? null : JSON.stringify({ task_id: id, state: 'succeeded', created_at: createdAt, note: 'é ✓' });
  return new StoredRecord({ workspace: '/ws', source: null }, id, stamp, createdAt === null ? undefined : 'succeeded', true, createdAt, i % 2 ? ['base#demo#r-0'] : [], text);
}

t.test('the index file gives back every record and its status text, read in runs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-index-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const records = Array.from({ length: 5000 }, (_, i) => stored(i, i === 7 ? null : new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), i === 9 ? null : undefined));
  const file = join(dir, 'task-index');
  await writeIndexFile(file, records, (batch) => statusTexts(batch, (r) => (r as StoredRecord).json()));
  const { records: list, source } = readIndexFile(file, '/ws');
  const read = new Map(list.map((r) => [r.id, r]));
  t.teardown(() => source?.close());
  t.equal(read.size, 4999, 'a record without a stamp (written by the service) is left to be read from disk');
  t.notOk(read.has('base#demo#r-9'));
  const back = records.filter((r) => r.id !== 'base#demo#r-9').map((r) => read.get(r.id)!);
  const expected = records.filter((r) => r.id !== 'base#demo#r-9').map((r) => r.json());
  t.same(statusTexts(back.slice(100, 356), () => 'not read in one run'), expected.slice(100, 356), 'a run of the file is read at once, multi-byte characters included');
  t.same(statusTexts(back, (r) => (r as StoredRecord).json()), expected, 'beyond the largest run, each text is read on its own');
  t.same(back[3]!.status, JSON.parse(records[3]!.json()!));
  // A listing's chunks: runs of the file and texts held in memory, multi-byte characters included.
  const mixed = [...back.slice(10, 300), stored(9000, '2027-01-01T00:00:00.000Z'), ...back.slice(300, 2000)];
  let joined = '';
  let chunks = 0;
  for (let i = 0; i < mixed.length; chunks++) {
    const { json, next } = statusChunk(mixed, i, (r) => (r as StoredRecord).json());
    t.ok(next > i, 'every chunk moves on');
    joined += json;
    i = next;
  }
  t.equal(joined, mixed.map((r) => r.json()).join(','), 'the chunks together are the texts, each after a comma but the listing\'s first');
  t.ok(chunks > 1 && chunks < 100, `a chunk holds many statuses (${chunks} chunks)`);
  t.equal(read.get('base#demo#r-7')!.status, null, 'a metadata-only record');
  t.same(read.get('base#demo#r-1')!.sources, ['base#demo#r-0']);
  t.equal(read.get('base#demo#r-1')!.dir, '/ws/base/base#demo#r-1');

  t.same(read.get('base#demo#r-3')!.stamp, { ino: 1, mtimeMs: 3.5 });
  t.ok(read.get('base#demo#r-3')!.matches({ ino: 1, mtimeMs: 3.5 }) && !read.get('base#demo#r-3')!.matches({ ino: 1, mtimeMs: 3 }), 'stamps compare exactly');
  t.same([read.get('base#demo#r-3')!.state, read.get('base#demo#r-3')!.hasMetadata, read.get('base#demo#r-7')!.state], ['succeeded', true, undefined]);
  await writeFile(file, 'taskyard-task-index 2\n["base#demo#r-1","12:345.5","failed",false,"2026-01-01T00:00:00.000Z",[]]\t{"a":1}\n');
  const previous = readIndexFile(file, '/ws');
  t.equal(previous.records.length, 0, 'a file of a version without checksums is not used (every record is read once)');
  await writeFile(file, 'taskyard-task-index 1\n["x"]\tnull\n');
  const old = readIndexFile(file, '/ws');
  t.equal(old.records.length, 0, 'a file of another version is not used');
  t.equal(readIndexFile(join(dir, 'absent'), '/ws').records.length, 0);
  t.same(list.map((r) => r.id), records.filter((r) => r.id !== 'base#demo#r-9').map((r) => r.id), 'in the order written');
  t.same(read.get('base#demo#r-1')!.parts, parseTaskId('base#demo#r-1'));
});

t.test('the change log answers the IDs changed after a version, also after compaction', async (t) => {
  const log = new ChangeLog();
  const start = log.cursor();
  for (let i = 0; i < 5000; i++) log.record(`t-${i % 10}`);
  const mid = log.cursor();
  log.record('t-3');
  log.record('t-new');
  log.record('t-3');
  t.same(log.since(mid), ['t-3', 't-new']);
  t.same(log.since(start)!.sort(), [...Array.from({ length: 10 }, (_, i) => `t-${i}`), 't-new'].sort());
  t.same(log.since(log.cursor()), []);
  t.equal(log.since('other.1'), null, 'a cursor of another run');
  t.equal(log.since(`${mid.split('.')[0]}.99999999`), null, 'a version from the future');
  t.equal(log.since('garbage'), null);
});

t.test('the listing order stays sorted through inserts, moves and removals', async (t) => {
  const order = new StatusOrder();
  const live = new Map<string, TaskRecord>();
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let step = 0; step < 3000; step++) {
    const id = `base#demo#r-${random(200)}`;
    const previous = live.get(id);
    if (random(5) === 0) {
      order.replace(previous, undefined);
      live.delete(id);
      continue;
    }
    const record = stored(Number(id.slice(12)), `2026-01-01T00:00:0${random(10)}.000Z`);
    order.replace(previous, record);
    live.set(id, record);
  }
  t.same(order.view().map((r) => r.id), [...live.values()].sort(compareListed).map((r) => r.id));
  t.equal(order.size, live.size);
  const snapshot = order.snapshot();
  const before = snapshot.map((r) => r.id);
  const first = snapshot[0]!;
  order.replace(first, undefined);
  order.replace(undefined, stored(999, '2030-01-01T00:00:00.000Z'));
  t.same(snapshot.map((r) => r.id), before, 'a snapshot keeps its order through later changes');
  t.equal(order.view()[0]!.id, 'base#demo#r-999');
  t.notOk(order.view().includes(first));
});
