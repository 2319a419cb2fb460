import t from 'tap';
import { BytePieces } from '../../supervisor/tasks/byte-pieces.js';

const MB = 1 << 20;

/** Adds `texts` (ASCII ones flagged as such), taking pieces as a lineage does; answers every piece. */
function piecesOf(texts: readonly string[]): Buffer[] {
  const out = new BytePieces();
  const pieces: Buffer[] = [];
  for (const text of texts) {
    out.add(text, Buffer.byteLength(text) === text.length);
    if (out.hasReady) pieces.push(...out.take());
  }
  pieces.push(...out.take(true));
  return pieces;
}

t.test('ASCII and non-ASCII texts come out as the UTF-8 of their concatenation, no character split between pieces', async (t) => {
  const texts: string[] = [];
  // 3,000 texts of ~1 KB with é (2 bytes), ☕ (3 bytes) and 🚀 (a surrogate pair, 4 bytes) among ASCII ones:
  // more than 3 MB, so pieces fill up, and a multi-byte text meets the end of a piece.
  for (let i = 0; i < 3000; i++) texts.push(i % 3 === 0 ? `,{"note":"café ☕ 🚀 ${i}${'é'.repeat(300)}"}` : `,{"id":"base#demo#child-${i}","pad":"${'x'.repeat(900)}"}`);
  const pieces = piecesOf(texts);
  t.ok(pieces.length > 3, `several pieces (${pieces.length})`);
  t.ok(pieces.every((p) => p.length <= MB), 'no piece is over 1 MiB');
  t.same(Buffer.concat(pieces), Buffer.from(texts.join('')), 'byte-identical to the joined text');
  for (const piece of pieces) t.same(Buffer.from(piece.toString('utf8')), piece, 'each piece is whole UTF-8');
});

t.test('a text larger than a piece is a piece of its own; small answers stay small', async (t) => {
  const big = `"${'ü'.repeat(MB)}"`; // 2 MiB of UTF-8
  const pieces = piecesOf(['[', big, ',', '"tail"]']);
  t.same(pieces.map((p) => p.length), [1, Buffer.byteLength(big), 8], 'before, the big text, after');
  t.equal(Buffer.concat(pieces).toString('utf8'), `[${big},"tail"]`);
  const small = piecesOf(['{"a":', '"ß"', '}']);
  t.same(small.map((p) => p.toString()), ['{"a":"ß"}'], 'one piece');
  t.ok(small[0]!.buffer.byteLength < MB, 'taken from a small buffer, not a whole piece');
  t.same(piecesOf([]), [], 'nothing added: no piece');
});
