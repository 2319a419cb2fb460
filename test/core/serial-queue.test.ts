import t from 'tap';
import { SerialQueue } from '../../core/serial-queue.js';

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

t.test('work of one key runs one at a time, in call order', async (t) => {
  const queue = new SerialQueue();
  const events: string[] = [];
  const first = gate();
  const a = queue.run('k', async () => {
    events.push('a start');
    await first.opened;
    events.push('a end');
    return 'a';
  });
  const b = queue.run('k', async () => {
    events.push('b start');
    return 'b';
  });
  await Promise.resolve();
  t.same(events, ['a start'], 'b waits while a runs');
  first.open();
  t.same(await Promise.all([a, b]), ['a', 'b'], 'each caller gets its own answer');
  t.same(events, ['a start', 'a end', 'b start']);
});

t.test('a failure rejects its own caller only', async (t) => {
  const queue = new SerialQueue();
  const failed = queue.run('k', async () => {
    throw new Error('boom');
  });
  const next = queue.run('k', async () => 'ran');
  await t.rejects(failed, { message: 'boom' });
  t.equal(await next, 'ran', 'the work queued behind a failure still runs');
});

t.test('keys do not wait for each other, and an idle key is dropped', async (t) => {
  const queue = new SerialQueue();
  const held = gate();
  const slow = queue.run('one', async () => held.opened);
  t.equal(await queue.run('two', async () => 'two'), 'two', 'another key runs while "one" is busy');
  t.equal(queue.activeKeys, 1, 'only the busy key is held');
  held.open();
  await slow;
  t.equal(queue.activeKeys, 0, 'nothing is kept once every queue ran dry');
});
