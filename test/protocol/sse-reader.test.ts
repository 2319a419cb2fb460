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
    { message: /oversized event \(more than 8388608 characters\)/ },
  );
  const many = Array.from({ length: 200 }, () => `data: ${'y'.repeat(64 * 1024)}\n`).join('');
  await t.rejects(collect([many], 1024 * 1024), { message: /oversized event/ }, 'many data lines of one event count together');
  t.same(await collect([`data: {"kind":"log","content":"${'z'.repeat(1000)}"}\n\n`.repeat(3)], 2000), Array(3).fill({ kind: 'log', content: 'z'.repeat(1000) }), 'the bound is per event');
});
