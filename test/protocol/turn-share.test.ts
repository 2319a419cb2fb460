import t from 'tap';
import { mayWork, nextTurn, SLICE_MS } from '../../protocol/turn-share.js';
import { readSseEvents } from '../../protocol/sse-reader.js';

/** Keeps the thread busy until `ms` have passed (work, not a wait: the slice is measured in time used). */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

t.test('one slice per turn for everyone: once it is used up, every caller waits for the next turn', async (t) => {
  await nextTurn();
  t.ok(mayWork(), 'the first piece of work in a turn may run');
  work(SLICE_MS + 1);
  t.notOk(mayWork(), 'not a second one past the slice');
  t.notOk(mayWork(), 'nor anyone else in this turn');
  await nextTurn();
  t.ok(mayWork(), 'the next turn has a new slice');
});

t.test('five endless event streams read at once leave turns to other work, and each still advances', async (t) => {
  const piece = Buffer.from('data: {"kind":"log","content":"x"}\n\n'.repeat(2_000));
  const read = [0, 0, 0, 0, 0];
  const stop = new AbortController();
  // Chunks that are always ready: without turns given up, the readers would hold the thread to the end.
  async function* endless(k: number): AsyncGenerator<Uint8Array> {
    while (!stop.signal.aborted) {
      read[k]! += piece.length;
      yield piece;
    }
  }
  const readers = read.map((_, k) => (async () => {
    for await (const event of readSseEvents(endless(k))) void event;
  })());
  let turns = 0;
  while (turns < 50) {
    await nextTurn();
    turns++;
  }
  stop.abort();
  await Promise.all(readers);
  t.equal(turns, 50, 'other work ran 50 turns while the streams were read');
  t.ok(read.every((bytes) => bytes > 0), `every stream advanced: ${read.join(', ')} bytes`);
});
