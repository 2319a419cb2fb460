// Unit test of the shared change notification behind wait_task and stream_task: one index
// listener and one timer per Task however many wait, the staleness bound, and a follower's abort.
import t from 'tap';
import { ChangeFeed, FollowerWait, type ChangeSource } from '../../supervisor/tasks/follow/change-feed.js';

/** The task index's one-shot listeners, counted. */
class Listeners implements ChangeSource {
  readonly byId = new Map<string, Set<() => void>>();
  onNextChange(id: string, listener: () => void): () => void {
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }
  notify(id: string): void {
    const set = this.byId.get(id);
    this.byId.delete(id);
    for (const l of set ?? []) l();
  }
  count(id: string): number {
    return this.byId.get(id)?.size ?? 0;
  }
}

t.test('every waiter of a Task shares one promise and one index listener; a change wakes them all', async (t) => {
  const index = new Listeners();
  const feed = new ChangeFeed(index);
  const waits = Array.from({ length: 1000 }, () => feed.next('a', 60_000));
  t.equal(new Set(waits).size, 1, 'one promise for all');
  t.equal(index.count('a'), 1, 'one listener on the index');
  const other = feed.next('b', 60_000);
  t.not(other, waits[0], 'another Task has its own');
  let woken = 0;
  for (const w of waits) void w.then(() => woken++);
  index.notify('a');
  await Promise.all(waits);
  t.equal(woken, 1000, 'all woken by the one change');
  t.not(feed.next('a', 60_000), waits[0], 'the next change is a new promise');
  index.notify('a');
  index.notify('b');
  await other;
});

t.test('the staleness bound wakes waiters without a change; a smaller bound re-arms the timer', async (t) => {
  const index = new Listeners();
  const feed = new ChangeFeed(index);
  const slow = feed.next('a', 60_000);
  const start = Date.now();
  t.equal(feed.next('a', 20), slow, 'a tighter poll shares the pending change');
  await slow;
  t.ok(Date.now() - start < 30_000, 'woken by the 20 ms bound, not the 60 s one');
  t.equal(index.count('a'), 0, 'its index listener is removed');
});

t.test('a follower wait ends with CancelledError once its caller goes away, and leaves no listener', async (t) => {
  const index = new Listeners();
  const feed = new ChangeFeed(index);
  const controller = new AbortController();
  const wait = new FollowerWait(controller.signal);
  const pending = wait.until(feed.next('a', 60_000));
  controller.abort();
  await t.rejects(pending, { name: 'CancelledError' });
  wait.close();
  await t.rejects(wait.until(feed.next('a', 60_000)), { name: 'CancelledError' }, 'an aborted caller does not wait at all');
  const live = new FollowerWait(new AbortController().signal);
  const woken = live.until(feed.next('a', 60_000));
  index.notify('a');
  await woken;
  live.close();
  t.pass('a change wakes a follower whose caller is still there');
});
