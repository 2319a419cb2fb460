import t, { type Test } from 'tap';
import { ResponseReader, type ResponseHead } from '../../protocol/http1-response-reader.js';

interface Read {
  heads: ResponseHead[];
  body: string;
  ends: boolean[];
}

function reader(headRequest = false): { reader: ResponseReader; read: Read } {
  const read: Read = { heads: [], body: '', ends: [] };
  const r = new ResponseReader({ head: (h) => read.heads.push(h), data: (c) => (read.body += c.toString('latin1')), end: (reusable) => read.ends.push(reusable) }, headRequest);
  return { reader: r, read };
}

/** Feeds `wire` cut in two at every position, and byte by byte: the outcome must never change. */
function everyCut(t: Test, wire: string, check: (read: Read, how: string) => void): void {
  for (let cut = 0; cut <= wire.length; cut++) {
    const { reader: r, read } = reader();
    r.feed(Buffer.from(wire.slice(0, cut), 'latin1'));
    r.feed(Buffer.from(wire.slice(cut), 'latin1'));
    check(read, `cut at ${cut}`);
  }
  const { reader: r, read } = reader();
  for (const byte of Buffer.from(wire, 'latin1')) r.feed(Buffer.of(byte));
  check(read, 'byte by byte');
  t.pass(`${wire.length + 2} ways of cutting`);
}

t.test('a Content-Length answer, cut anywhere', async (t) => {
  everyCut(t, 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 11\r\n\r\n{"ok":true}', (read, how) => {
    if (read.heads.length !== 1 || read.body !== '{"ok":true}' || read.ends.join() !== 'true') t.fail(how, read);
    if (read.heads[0]!.statusCode !== 200 || read.heads[0]!.headers['x-a'] !== '1, 2' || read.heads[0]!.headers['content-type'] !== 'application/json') t.fail(how, read);
  });
});

t.test('a chunked answer with extensions and trailers, after a 100 Continue, cut anywhere', async (t) => {
  const wire = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n, chunked!\r\n0\r\nX-Trailer: yes\r\n\r\n';
  everyCut(t, wire, (read, how) => {
    if (read.heads.length !== 1 || read.heads[0]!.statusCode !== 201 || read.body !== 'hello, chunked!' || read.ends.join() !== 'true') t.fail(how, read);
  });
});

t.test('header names are plain keys, whatever they are called', async (t) => {
  everyCut(t, 'HTTP/1.1 200 OK\r\nConstructor: a\r\n__proto__: b\r\ntoString: c\r\nContent-Length: 2\r\n\r\nok', (read, how) => {
    const headers = read.heads[0]?.headers;
    if (!headers || read.body !== 'ok' || read.ends.join() !== 'true') t.fail(how, read);
    else if (headers['constructor'] !== 'a' || headers['__proto__'] !== 'b' || headers['tostring'] !== 'c' || Object.keys(headers).length !== 4) t.fail(how, read);
  });
});

t.test('bodies that end with the connection, or have none', async (t) => {
  const untilClose = reader();
  untilClose.reader.feed(Buffer.from('HTTP/1.1 200 OK\r\n\r\nall of it'));
  t.same(untilClose.read.ends, [], 'no end before the close');
  untilClose.reader.closed();
  t.same([untilClose.read.body, untilClose.read.ends], ['all of it', [false]], 'a close-delimited body ends with the connection, which is not reused');

  const closing = reader();
  closing.reader.feed(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok'));
  t.same(closing.read.ends, [false], 'connection: close is not reused');

  for (const [wire, headRequest] of [['HTTP/1.1 204 No Content\r\n\r\n', false], ['HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n', false], ['HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n', true]] as const) {
    const { reader: r, read } = reader(headRequest);
    r.feed(Buffer.from(wire));
    t.same([read.body, read.ends], ['', [true]], `${wire.split('\r\n')[0]}${headRequest ? ' to HEAD' : ''} has no body`);
  }
});

t.test('a broken peer is an error, never a short answer passed off as complete', async (t) => {
  const broken: Array<[string, RegExp]> = [
    ['SSH-2.0-OpenSSH\r\n\r\n', /not an HTTP\/1\.1 response/],
    ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /malformed Content-Length/],
    ['HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n', /malformed Content-Length/],
    ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /malformed response header/],
    ['HTTP/1.1 200 OK\r\nno colon here\r\nx: 1\r\n\r\n', /malformed response header/],
    ['HTTP/1.1 200 OK\r\n: nameless\r\n\r\n', /malformed response header/],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /malformed chunk size/],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX', /no CRLF after a chunk/],
    ['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA', /bytes after its answer/],
    [`HTTP/1.1 200 OK\r\nx: ${'y'.repeat(70 * 1024)}`, /response head larger than/],
    [`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${'1'.repeat(5000)}`, /line too long/],
  ];
  for (const [wire, message] of broken) t.throws(() => reader().reader.feed(Buffer.from(wire)), message, wire.slice(0, 40));

  const cut = reader();
  cut.reader.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
  t.throws(() => cut.reader.closed(), /closed before the answer was complete/);
  const silent = reader();
  t.equal(silent.reader.started, false);
  t.throws(() => silent.reader.closed(), /closed before an answer/);
});
