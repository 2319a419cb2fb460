import t from 'tap';
import { isUtf8Continuation, utf8SafeLength } from '../../core/utf8-cut.js';

t.test('a cut never ends inside a character', async (t) => {
  // a = 1 byte (0), € = 3 bytes (1..3), 😀 = 4 bytes (4..7)
  const bytes = Buffer.from('a€😀');
  t.same([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => utf8SafeLength(bytes.subarray(0, n))), [0, 1, 1, 1, 4, 4, 4, 4, 8]);
  t.equal(utf8SafeLength(Buffer.from('aé').subarray(0, 2)), 1, 'inside the é: back to its lead byte');
});

t.test('what is kept decodes without a replacement character', async (t) => {
  const text = 'ü€😀x'.repeat(3);
  const bytes = Buffer.from(text);
  for (let n = 0; n <= bytes.length; n++) {
    const kept = bytes.subarray(0, utf8SafeLength(bytes.subarray(0, n))).toString('utf8');
    if (kept.includes('\uFFFD') || !text.startsWith(kept)) t.fail(`cut at ${n}: ${JSON.stringify(kept)}`);
  }
  t.pass('every cut is a prefix of the text');
});

t.test('stray bytes are left as they are', async (t) => {
  t.equal(utf8SafeLength(Uint8Array.of(0x80, 0x80, 0x80, 0x80)), 4, 'four continuation bytes: no character to finish');
  t.equal(utf8SafeLength(Uint8Array.of(0x61, 0xff)), 2, 'an invalid byte is one byte');
  t.ok(isUtf8Continuation(0x80) && isUtf8Continuation(0xbf));
  t.notOk(isUtf8Continuation(0x7f) || isUtf8Continuation(0xc3));
});
