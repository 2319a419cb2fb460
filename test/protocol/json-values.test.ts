// Runs on every HTTP front end.
import t from 'tap';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { AbortPoint } from '../../protocol/abort-hook.js';
import type { IncomingRequest } from '../../protocol/http.js';
import { MAX_JSON_VALUES, readJson } from '../../protocol/json-body.js';
import { OFF_LOOP_BYTES } from '../../protocol/json-parse-thread.js';
import { JsonValueCounter } from '../../protocol/json-values.js';
import { startTestService } from '../helpers/service.js';
import { testJobs } from '../helpers/test-jobs.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** `{"arguments":{"text":"hi","items":[{},{},…]}}` with `n` objects, as bytes. */
const manyObjects = (n: number) => Buffer.from(`{"arguments":{"text":"hi","items":[${'{},'.repeat(n - 1)}{}]}}`);

// One service for the tests that call it: each sends its own bodies and none reads shared state.
const svc = await startTestService(t, { capabilities });

t.test('a body of millions of values is refused at once with 422; a body of large strings is read', async (t) => {
  const post = (path: string, body: Buffer | string, headers: Record<string, string> = { 'content-type': 'application/json' }) => svc.fetch(path, { method: 'POST', headers, body });

  // 15.9 MiB, 5.6 million empty objects: parsed, it held the event loop for seconds.
  const flood = manyObjects(5_550_000);
  for (const path of ['/jobs/echo', '/jobs/echo/events']) {
    const res = await post(path, flood);
    t.equal(res.status, 422, `${path}: 422`);
    const detail = ((await res.json()) as { detail: Array<{ loc: string[]; msg: string; type: string }> }).detail;
    t.equal(detail[0]?.type, 'json_too_many_values', `${path}: the detail says why`);
    t.match(detail[0]?.msg, `more than ${MAX_JSON_VALUES} values`, `${path}: and what the limit is`);
  }

  // At the limit, the body reaches the schema (which refuses the extra field), not the counter.
  const within = await post('/jobs/echo', manyObjects(MAX_JSON_VALUES - 10));
  t.equal(within.status, 422);
  t.notMatch(await within.text(), 'json_too_many_values', 'a body within the limit is parsed and validated');

  // Brackets, commas and escaped quotes inside strings are text, not values.
  const text = `${'[{"a":1},\\"'.repeat(400_000)}\\\\`;
  const big = await post('/jobs/echo', JSON.stringify({ arguments: { text } }));
  t.equal(big.status, 200, 'a 5 MB string full of JSON punctuation is one value');
  t.equal(((await big.json()) as { answer: { text: string } }).answer.text, text, 'and arrives intact');

  const mcp = await post('/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi', items: Array.from({ length: 30_000 }, () => ({})) } } }), MCP_HEADERS);
  t.equal(mcp.status, 400, 'MCP: 400');
  t.match(await mcp.text(), `more than ${MAX_JSON_VALUES} values`, 'MCP: the error says why');

  t.equal((await svc.fetch('/health')).status, 200, 'the service keeps answering');
});

t.test('the counter gives the same count however the bytes are cut into chunks', async (t) => {
  const text = Buffer.from(String.raw`{"a\"b,{[":[1,2,{"c":"\\"},"\\\"]"],"d":[[],{}],"e":"x,y"}`);
  const whole = new JsonValueCounter(1000);
  whole.feed(text);
  t.equal(whole.count, 11, 'every value, keys and the contents of strings aside');
  const counts = new Set<number>();
  for (let a = 0; a <= text.length; a++) {
    for (let b = a; b <= text.length; b++) {
      const counter = new JsonValueCounter(1000);
      for (const piece of [text.subarray(0, a), text.subarray(a, b), text.subarray(b)]) counter.feed(piece);
      counts.add(counter.count);
    }
  }
  t.same([...counts], [11], 'every cut into three chunks counts the same');
  const empty = new JsonValueCounter(1000);
  empty.feed(Buffer.from('[ [ ] , { \n} ,[{}]]'));
  t.equal(empty.count, 5, 'empty arrays and objects hold nothing');
  const limited = new JsonValueCounter(4);
  t.equal(limited.feed(Buffer.from('[1,2,3]')), true, 'within the limit');
  t.equal(limited.feed(Buffer.from(',4')), false, 'past it');
});

t.test('a large body is parsed off the event loop, with the same answers as a small one', async (t) => {
  const post = (body: Buffer | string) => svc.fetch('/jobs/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  // Above OFF_LOOP_BYTES: a string of every kind of character, escapes and multi-byte ones included.
  const text = `${'aé\\"\n\u{1f600}x'.repeat(400_000)}end`;
  const big = await post(JSON.stringify({ arguments: { text, times: 2 } }));
  t.equal(big.status, 200, 'a body of one 5 MB string is answered');
  t.same(((await big.json()) as { answer: unknown }).answer, { text, times: 2 }, 'with its value intact');

  const broken = await post(`{"arguments":{"text":"${'x'.repeat(OFF_LOOP_BYTES)}"`);
  t.equal(broken.status, 422, 'a large malformed body: 422');
  t.match(await broken.text(), 'Invalid JSON', 'which says so');

  const deep = await post(`{"arguments":{"text":"${'x'.repeat(OFF_LOOP_BYTES)}","deep":${'['.repeat(100)}${']'.repeat(100)}}}`);
  t.equal(deep.status, 422, 'a large body nested too deep: 422');
  t.match(await deep.text(), 'json_too_deep', 'which says so');

  const schema = await post(JSON.stringify({ arguments: { text: 'hi', extra: 'x'.repeat(OFF_LOOP_BYTES) } }));
  t.equal(schema.status, 422, 'a large body the schema refuses: 422 from the schema');

  // Several at once, each answered with its own value.
  const texts = ['a', 'b', 'c', 'd'].map((c) => c.repeat(2 * OFF_LOOP_BYTES));
  const answers = await Promise.all(texts.map(async (text) => ((await (await post(JSON.stringify({ arguments: { text } }))).json()) as { answer: { text: string } }).answer.text));
  t.same(answers.map((a) => a.length === 2 * OFF_LOOP_BYTES && a[0]), ['a', 'b', 'c', 'd'], 'four at once, each its own');
  t.equal((await svc.fetch('/health')).status, 200, 'the service keeps answering');
});

t.test('while a large body is parsed, the event loop takes other work', async (t) => {
  const body = Buffer.from(JSON.stringify({ arguments: { text: 'x'.repeat(16 * 1024 * 1024 - 64) } }));
  const request: IncomingRequest = {
    method: 'POST',
    path: '/jobs/echo',
    query: '',
    headers: { 'content-length': String(body.length) },
    signal: new AbortController().signal,
    gone: new AbortPoint(),
    body: () => [body],
  };
  const order: string[] = [];
  const parsed = readJson(request, 32 * 1024 * 1024).then((value) => order.push(`parsed ${(value as { arguments: { text: string } }).arguments.text.length}`));
  setImmediate(() => order.push('another turn'));
  await parsed;
  t.same(order, ['another turn', `parsed ${16 * 1024 * 1024 - 64}`], 'the loop turned before the 16 MiB body was parsed');
  const small = readJson({ ...request, headers: {}, body: () => [Buffer.from('{"a":1}')] }, 1024);
  t.same(await small, { a: 1 }, 'a small body is parsed on the loop');
});
