import { appendFile, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FOLLOW_WINDOW_BYTES, LiveTask } from '../../supervisor/tasks/follow/live-task.js';
import { TaskIndex } from '../../supervisor/tasks/records/task-index.js';
import { logEventOf } from '../../supervisor/tasks/follow/task-broadcaster.js';

t.test("a live Task's log windows are shared across the log's growth; one that ended at the end is read again", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-live-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const log = join(dir, 'task.log');
  const size = 3 * FOLLOW_WINDOW_BYTES + 100;
  await writeFile(log, 'a'.repeat(size));
  const live = new LiveTask(new TaskIndex(dir), { id: 'fixture#base#a', parts: { type: 'fixture', registration: 'base', name: 'a' }, dir, runId: 'r1' }, () => {});
  t.teardown(() => live.close());
  await live.refresh();
  t.equal(live.logSize, size, 'the log size is known');

  const whole = await live.readLog(0);
  const last = await live.readLog(3 * FOLLOW_WINDOW_BYTES);
  t.equal(whole.next_offset, FOLLOW_WINDOW_BYTES, 'a whole window');
  t.equal(last.content.length, 100, 'and the last, ending at the end of the log');

  await appendFile(log, 'b'.repeat(50));
  await live.refresh();
  t.equal(live.logSize, size + 50, 'the log grew');
  t.equal(await live.readLog(0), whole, 'the whole window read before is shared still (one read, one event, one frame for every follower)');
  const longer = await live.readLog(3 * FOLLOW_WINDOW_BYTES);
  t.not(longer, last, 'the window that ended at the end is read again');
  t.equal(longer.content, `${'a'.repeat(100)}${'b'.repeat(50)}`, 'with what was added');

  await truncate(log, 10);
  await appendFile(log, 'c'.repeat(10));
  await live.refresh();
  const after = await live.readLog(0);
  t.not(after, whole, 'a log that shrank is read afresh');
  t.equal(after.content, `${'a'.repeat(10)}${'c'.repeat(10)}`, 'with what it holds now');
});

t.test('a window read at an odd offset ends on the next window boundary, so followers that drifted apart meet again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-live-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const log = join(dir, 'task.log');
  // Two-byte characters, one of them straddling the first boundary: the window before it stops short.
  await writeFile(log, `${'a'.repeat(FOLLOW_WINDOW_BYTES - 1)}é${'b'.repeat(3 * FOLLOW_WINDOW_BYTES)}`);
  const live = new LiveTask(new TaskIndex(dir), { id: 'fixture#base#a', parts: { type: 'fixture', registration: 'base', name: 'a' }, dir, runId: 'r1' }, () => {});
  t.teardown(() => live.close());
  await live.refresh();

  const odd = await live.readLog(1000);
  t.equal(odd.next_offset, FOLLOW_WINDOW_BYTES - 1, 'read from an odd offset, the window ends at the boundary (less the character that straddles it)');
  const straddling = await live.readLog(odd.next_offset);
  t.equal(straddling.start_offset, FOLLOW_WINDOW_BYTES - 1);
  t.equal(straddling.next_offset, 2 * FOLLOW_WINDOW_BYTES, 'a remainder too small for a character runs on to the boundary after, never an empty window');
  const next = await live.readLog(straddling.next_offset);
  t.equal(next.next_offset, 3 * FOLLOW_WINDOW_BYTES, 'the window after it is a whole one, on the boundaries');
  t.equal(await live.readLog(0).then((w) => w.next_offset), FOLLOW_WINDOW_BYTES - 1, 'a follower from the start ends its first window where the drifted one did');
});

t.test("a live window keeps its text as bytes: decoded on each read, the same in its event's JSON, never a string the window holds", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-live-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const text = 'line "one"\tü 😀\\\nline two\n';
  await writeFile(join(dir, 'task.log'), text);
  const live = new LiveTask(new TaskIndex(dir), { id: 'fixture#base#a', parts: { type: 'fixture', registration: 'base', name: 'a' }, dir, runId: 'r1' }, () => {});
  t.teardown(() => live.close());
  await live.refresh();
  const window = await live.readLog(0);
  // Kept as a string, 64 windows of text per followed Task were copied by every young-generation
  // collection (bench/memory.ts): the text lives off the heap, in bytes.
  t.type(Object.getOwnPropertyDescriptor(window, 'content')?.get, 'function', 'the text is read from bytes, not held');
  t.equal(window.content, text, 'decoded whole, characters of every width included');
  const plain = { content: text, start_offset: 0, next_offset: Buffer.byteLength(text), file_size: Buffer.byteLength(text), has_more_before: false, has_more_after: false, reset: false };
  t.equal(JSON.stringify(window), JSON.stringify(plain), 'its JSON is that of a plain window, fields in order');
  const event = logEventOf(window, 0)!;
  t.type(Object.getOwnPropertyDescriptor(event, 'content')?.get, 'function', 'its event does not read the text into a string either');
  t.equal(JSON.stringify(event), JSON.stringify({ kind: 'log', ...plain, channel: 'task' }), "the event's JSON is the log event's");
  t.same({ ...event }, { kind: 'log', ...plain, channel: 'task' }, 'and a copy of it is a plain event');
});
