import t from 'tap';
import { StrictDecoder, type StrictAnswer } from '../helpers/strict-http-client.js';

/**
 * The strict client's decoder (test/helpers/strict-http-client.ts), which the framing tests trust
 * to fail on the first wrong byte: it joins a chunk's reads only once it can parse them, so the
 * same bytes must decode alike however they are split, and a defect must still be named.
 */

const HEAD = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';
const BIG = 'x'.repeat(20_000);
const GOOD = `${HEAD}1\r\na\r\n${BIG.length.toString(16)}\r\n${BIG}\r\n0\r\n\r\nHTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n`;

function decode(pieces: string[]): StrictAnswer[] {
  const answers: StrictAnswer[] = [];
  const decoder = new StrictDecoder((a) => answers.push(a));
  for (const piece of pieces) decoder.feed(Buffer.from(piece, 'latin1'));
  decoder.closed();
  return answers;
}

function split(text: string, size: number): string[] {
  return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
}

t.test('the same bytes decode alike in one read, in 1-byte reads and in odd-sized reads', async (t) => {
  for (const size of [GOOD.length, 1, 7, 4096, 16_384]) {
    const answers = decode(split(GOOD, size));
    t.same(
      answers.map((a) => [a.status, a.chunks, a.body.toString('latin1')]),
      [
        [200, 2, `a${BIG}`],
        [204, 0, ''],
      ],
      `reads of ${size} bytes`,
    );
  }
});

t.test('a chunk without its CRLF, a bad size line and a cut answer are named, however split', async (t) => {
  const noCrlf = `${HEAD}${BIG.length.toString(16)}\r\n${BIG}XX0\r\n\r\n`;
  const badSize = `${HEAD}1\r\na\r\nzz\r\n`;
  const cut = `${HEAD}${BIG.length.toString(16)}\r\n${BIG.slice(0, 1000)}`;
  for (const size of [1_000_000, 4096, 1]) {
    t.throws(() => decode(split(noCrlf, size)), /framing error at stream offset \d+: no CRLF after a chunk of 20000 bytes/, `no CRLF, reads of ${size}`);
    t.throws(() => decode(split(badSize, size)), /invalid chunk size line "zz"/, `bad size line, reads of ${size}`);
    t.throws(() => decode(split(cut, size)), /connection closed inside an answer/, `cut answer, reads of ${size}`);
  }
});
