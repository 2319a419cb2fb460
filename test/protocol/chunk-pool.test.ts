import t from 'tap';
import { ChunkPool } from '../../protocol/chunk-pool.js';

const bytes = (size: number, fill: number) => new Uint8Array(size).fill(fill).buffer;

t.test('chunks are private copies; a recycled slab is reused, foreign or doubly recycled buffers are not', async (t) => {
  const pool = new ChunkPool();
  const source = bytes(64 * 1024, 1);
  const first = pool.copy(source);
  new Uint8Array(source).fill(9);
  t.equal(first[0], 1, 'changing the lent memory afterwards does not change the copy');
  t.equal(first.byteLength, 64 * 1024);

  pool.recycle(first);
  const second = pool.copy(bytes(100 * 1024, 2));
  t.equal(second.buffer, first.buffer, 'the recycled slab holds the next chunk');
  t.same([second.byteLength, second[0], second[second.byteLength - 1]], [100 * 1024, 2, 2]);

  const third = pool.copy(bytes(8 * 1024, 3));
  t.not(third.buffer, second.buffer, 'a slab in use is never handed out twice');
  pool.recycle(second);
  pool.recycle(second);
  const fourth = pool.copy(bytes(8 * 1024, 4));
  const fifth = pool.copy(bytes(8 * 1024, 5));
  t.not(fourth.buffer, fifth.buffer, 'recycling the same chunk twice frees its slab once');

  const foreign = new Uint8Array(new ArrayBuffer(512 * 1024));
  pool.recycle(foreign);
  const sixth = pool.copy(bytes(8 * 1024, 6));
  t.not(sixth.buffer, foreign.buffer, 'a buffer the pool never lent is not taken in');
  t.not(sixth.buffer, fourth.buffer);
});

t.test('tiny and oversized chunks are plain copies, never pooled', async (t) => {
  const pool = new ChunkPool();
  const tiny = pool.copy(bytes(100, 7));
  const huge = pool.copy(bytes(600 * 1024, 8));
  t.same([tiny.byteLength, tiny[99], huge.byteLength, huge[0]], [100, 7, 600 * 1024, 8]);
  pool.recycle(huge);
  t.not(pool.copy(bytes(600 * 1024, 1)).buffer, huge.buffer);
});
