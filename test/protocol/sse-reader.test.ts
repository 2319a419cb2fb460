import t from 'tap';
import { readSseEvents } from '../../protocol/sse-reader.js';

async function* chunks(parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

async function collect(parts: Array<string | Uint8Array>, limit?: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const event of readSseEvents(chunks(parts), limit)) out.push(event);
  return out;
}

t.test('frames split anywhere, with LF, CRLF or CR line ends', async (t) => {
  const a = 'event: log\ndata: {"kind":"log","content":"x"}\n\n';
  const b = 'event: result\r\ndata: {"kind":"result","success":true}\r\n\r\n';
  const c = ': keep-alive\r\rdata: {"kind":"progress",\rdata: "name":"n"}\r\r';
  const whole = a + b + c;
  const expected = [{ kind: 'log', content: 'x' }, { kind: 'result', success: true }, { kind: 'progress', name: 'n' }];
  t.same(await collect([whole]), expected, 'one chunk');
  for (let cut = 1; cut < whole.length; cut++) {
    t.same(await collect([whole.slice(0, cut), whole.slice(cut)]), expected, `cut at ${cut}`);
  }
  const bytes = Buffer.from('data: {"kind":"log","content":"é€"}\n\n');
  t.same(await collect([...bytes].map((byte) => Uint8Array.of(byte))), [{ kind: 'log', content: 'é€' }], 'multi-byte characters split across chunks');
  t.same(await collect(['data: {"kind":"result"}']), [{ kind: 'result' }], 'a last event without its blank line');
});

t.test('an oversized event ends the stream with an error that says so', async (t) => {
  const line = 'x'.repeat(64 * 1024);
  async function* endless(): AsyncGenerator<Uint8Array> {
    yield Buffer.from('data: {"kind":"log","content":"');
    for (;;) yield Buffer.from(line);
  }
  await t.rejects(
    (async () => {
      for await (const event of readSseEvents(endless(), 8 * 1024 * 1024)) void event;
    })(),
    { message: /oversized event \(more than 8388608 bytes\)/ },
  );
  const many = Array.from({ length: 200 }, () => `data: ${'y'.repeat(64 * 1024)}\n`).join('');
  await t.rejects(collect([many], 1024 * 1024), { message: /oversized event/ }, 'many data lines of one event count together');
  t.same(await collect([`data: {"kind":"log","content":"${'z'.repeat(1000)}"}\n\n`.repeat(3)], 2000), Array(3).fill({ kind: 'log', content: 'z'.repeat(1000) }), 'the bound is per event');
});

t.test('empty and short data lines count by the bytes received, so they cannot pile up', async (t) => {
  const limit = 1024 * 1024;
  // 6 bytes each on the wire, 1 kept: counting only what is kept let 500 MB of them through.
  const empty = 'data:\n'.repeat(64 * 1024);
  async function* lines(line: string): AsyncGenerator<Uint8Array> {
    for (let sent = 0; sent < 8 * limit; sent += line.length) yield Buffer.from(line);
  }
  await t.rejects((async () => {
    for await (const event of readSseEvents(lines(empty), limit)) void event;
  })(), { message: /oversized event \(more than 1048576 bytes\)/ }, 'empty data lines');
  await t.rejects((async () => {
    for await (const event of readSseEvents(lines('data: x\n'.repeat(32 * 1024)), limit)) void event;
  })(), { message: /oversized event/ }, 'one-character data lines');
  const fits = `data: {"kind":"log",\n${'data:\n'.repeat(1000)}data: "content":"c"}\n\n`;
  t.same(await collect([fits.repeat(3)], fits.length), Array(3).fill({ kind: 'log', content: 'c' }), 'an event within the limit passes, and the count starts again with each event');
  t.same(await collect([`\ufeffdata: {"kind":"log"}\n\n`]), [{ kind: 'log' }], 'a byte order mark at the start is dropped');
});
