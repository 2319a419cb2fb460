import t from 'tap';
import type { SharedWrite } from '../../core/shared-events.js';
import type { JobEvent } from '../../schemas/events.js';
import type { TaskLogChunk } from '../../schemas/tasks.js';
import { ProgressWindow } from '../../supervisor/tasks/follow/progress-window.js';
import { TaskBroadcaster, type BroadcastSource, type FollowPoint } from '../../supervisor/tasks/follow/task-broadcaster.js';

/** A live Task in memory: its progress list and a log read in windows of `window` bytes. */
class MemoryTask implements BroadcastSource {
  progress = new ProgressWindow();
  log = '';
  reads = 0;
  constructor(private readonly window = 1 << 16) {}
  get logSize(): number {
    return Buffer.byteLength(this.log);
  }
  async readLog(offset: number): Promise<TaskLogChunk> {
    this.reads++;
    const content = this.log.slice(offset, offset + this.window);
    const next = offset + content.length;
    return { content, start_offset: offset, next_offset: next, file_size: this.logSize, has_more_before: offset > 0, has_more_after: next < this.logSize, reset: false };
  }
  step(line: string, name = 'step'): void {
    this.log += line;
    this.progress.push({ kind: 'progress', name, started_at: 'now', finished_at: null, percentage: this.progress.count });
  }
}

/** A follower's writer: records what it was sent and answers what the test says. */
function writer(answer: () => SharedWrite = () => 'sent') {
  const got: Array<readonly JobEvent[]> = [];
  const emit = (events: readonly JobEvent[]): SharedWrite => {
    got.push(events);
    return answer();
  };
  return { got, emit };
}

/** Lets the broadcaster's reads and writes happen. */
const settle = () => new Promise((r) => setImmediate(r));

const logText = (batches: Array<readonly JobEvent[]>) => batches.flat().filter((e) => e.kind === 'log').map((e) => (e as { content: string }).content).join('');

t.test('members at the same point share one event list per change; others are turned away', async (t) => {
  const task = new MemoryTask();
  task.step('one\n');
  const b = new TaskBroadcaster(task);
  const at: FollowPoint = { progress: 1, offset: 4 };
  const a = writer();
  const c = writer();
  const left = [b.join(a.emit, at, new AbortController().signal), b.join(c.emit, { ...at }, new AbortController().signal)];
  t.equal(await b.join(writer().emit, { progress: 0, offset: 0 }, new AbortController().signal), null, 'a follower behind is turned away');
  t.equal(await b.join(writer().emit, { progress: 1, offset: 9 }, new AbortController().signal), null, 'a follower ahead is turned away');
  t.equal(b.size, 2);

  task.step('two\n');
  b.changed();
  await settle();
  t.equal(a.got.length, 1, 'one write per change');
  t.equal(a.got[0], c.got[0], 'the same list for every member (its bytes are made once)');
  t.same(a.got[0]!.map((e) => e.kind), ['progress', 'log'], 'progress, then the log window, in one write');
  t.equal(logText(a.got), 'two\n');
  t.equal(task.reads, 1, 'one read for all members');

  b.close();
  t.same(await Promise.all(left), [{ progress: 2, offset: 8 }, { progress: 2, offset: 8 }], 'the end hands each member back at the point it reached');
  t.equal(b.size, 0);
});

t.test('a backpressured member leaves after the write; the others keep getting every change', async (t) => {
  const task = new MemoryTask();
  const b = new TaskBroadcaster(task);
  let slowAnswer: SharedWrite = 'sent';
  const slow = writer(() => slowAnswer);
  const fast = writer();
  const gone = writer(() => 'refused');
  const start = { progress: 0, offset: 0 };
  const slowLeft = b.join(slow.emit, start, new AbortController().signal);
  const goneLeft = b.join(gone.emit, start, new AbortController().signal);
  void b.join(fast.emit, start, new AbortController().signal);

  task.step('a\n');
  slowAnswer = 'full';
  b.changed();
  t.same(await slowLeft, { progress: 1, offset: 2 }, 'backpressured: the write counts, it goes on from after it');
  t.same(await goneLeft, { progress: 0, offset: 0 }, 'refused: the write does not count');
  task.step('b\n');
  b.changed();
  await settle();
  t.equal(slow.got.length, 1, 'nothing more for the member that left');
  t.equal(logText(fast.got), 'a\nb\n', 'the others get every change');
  t.equal(b.size, 1);
  b.close();
});

t.test('a follower that joins between two changes gets the second one only', async (t) => {
  const task = new MemoryTask();
  const b = new TaskBroadcaster(task);
  const early = writer();
  void b.join(early.emit, { progress: 0, offset: 0 }, new AbortController().signal);
  task.step('first\n');
  b.changed();
  await settle();
  const late = writer();
  t.equal(await Promise.race([b.join(late.emit, { progress: 0, offset: 0 }, new AbortController().signal), settle().then(() => 'member')]), null, 'at the old point: turned away');
  void b.join(late.emit, { progress: 1, offset: 6 }, new AbortController().signal);
  task.step('second\n');
  b.changed();
  await settle();
  t.equal(logText(early.got), 'first\nsecond\n');
  t.equal(logText(late.got), 'second\n');
  t.same(late.got[0]!.map((e) => e.kind), ['progress', 'log']);
  b.close();
});

t.test('joining waits for a change being written, then compares with the point after it', async (t) => {
  const task = new MemoryTask();
  const b = new TaskBroadcaster(task);
  const early = writer();
  const earlyLeft = b.join(early.emit, { progress: 0, offset: 0 }, new AbortController().signal);
  task.step('first\n');
  b.changed(); // the read is under way
  const late = writer();
  // The late follower read the first change itself and stands after it.
  const lateLeft = b.join(late.emit, { progress: 1, offset: 6 }, new AbortController().signal);
  await settle();
  task.step('second\n');
  b.changed();
  await settle();
  t.equal(logText(early.got), 'first\nsecond\n');
  t.equal(logText(late.got), 'second\n', 'joined between the changes: nothing twice, nothing missed');
  t.equal(early.got[1], late.got[0], 'and shares the second write');
  b.close();
  t.same(await Promise.all([earlyLeft, lateLeft]), [{ progress: 2, offset: 13 }, { progress: 2, offset: 13 }]);
});

t.test('an aborted follower leaves at once; a burst goes one window per write', async (t) => {
  const task = new MemoryTask(4);
  const b = new TaskBroadcaster(task);
  const abort = new AbortController();
  const quitter = writer();
  const stayer = writer();
  const quit = b.join(quitter.emit, { progress: 0, offset: 0 }, abort.signal);
  void b.join(stayer.emit, { progress: 0, offset: 0 }, new AbortController().signal);
  abort.abort();
  t.same(await quit, { progress: 0, offset: 0 });
  t.equal(await b.join(writer().emit, { progress: 0, offset: 0 }, abort.signal), null, 'an aborted follower does not join');
  task.log = 'abcdefghij';
  b.changed();
  // A turn of the event loop between windows: three windows take a few.
  for (let turns = 0; turns < 10 && stayer.got.length < 3; turns++) await settle();
  t.same(stayer.got.map((events) => (events[0] as { content: string }).content), ['abcd', 'efgh', 'ij'], 'windows in order, one write each');
  t.equal(quitter.got.length, 0);
  b.close();
});
