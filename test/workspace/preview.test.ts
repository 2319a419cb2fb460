import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsvSync } from 'csv-parse/sync';
import t from 'tap';
import type { PreviewAnswer } from '../../schemas/workspace.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';
import { put, writeParquetFixture } from './fixtures.js';

const KiB = 1024;

/** The answer as a preview of one of these kinds: a preview of another kind fails the test here. */
function asKind<K extends PreviewAnswer['kind']>(answer: PreviewAnswer, ...kinds: K[]): PreviewAnswer & { kind: K } {
  const isKind = (a: PreviewAnswer): a is PreviewAnswer & { kind: K } => kinds.some((k) => k === a.kind);
  if (!isKind(answer)) throw new Error(`expected a ${kinds.join(' or ')} preview, got ${JSON.stringify(answer).slice(0, 200)}`);
  return answer;
}

// One service for the whole file: every test previews files of its own names, and a service (its
// worker pool, its runner) costs more to start than the previews it serves.
const svc = await startTestService(t);

t.test('text: small file whole, long file cut at 512 KiB on a character boundary', async (t) => {
  await put(svc.workspace, 'notes.txt', 'héllo\nwörld\n');
  const small = await svc.call('preview_file', { path: 'notes.txt' });
  t.same(small.body, { success: true, metadata: {}, answer: { kind: 'text', size: 14, content: 'héllo\nwörld\n', truncated: false } });

  // A 3-byte euro sign straddles the 512 KiB boundary: it must be dropped whole, not split.
  const head = 'a'.repeat(512 * KiB - 1);
  await put(svc.workspace, 'euro.log', `${head}€tail`);
  const euro = await svc.call('preview_file', { path: 'euro.log' });
  const answer = asKind(euro.body.answer, 'text');
  t.equal(answer.truncated, true);
  t.equal(answer.size, 512 * KiB + 6);
  t.equal(answer.content, head);
  t.notOk(answer.content.includes('\uFFFD'), 'no replacement character from a split sequence');

  // A 4-byte emoji ending exactly at the limit is kept.
  const emojiHead = 'b'.repeat(512 * KiB - 4);
  await put(svc.workspace, 'emoji.txt', `${emojiHead}😀more`);
  const emoji = asKind((await svc.call('preview_file', { path: 'emoji.txt' })).body.answer, 'text');
  t.equal(emoji.content, `${emojiHead}😀`);
  t.equal(emoji.truncated, true);
  t.equal(Buffer.byteLength(emoji.content), 512 * KiB);
});

t.test('markdown: frontmatter only at the start, errors reported not thrown', async (t) => {
  await put(svc.workspace, 'a.md', '---\ntitle: Report\ntags: [x, y]\n---\n# Heading\n');
  await put(svc.workspace, 'bad.md', '---\ntitle: [unclosed\n---\nBody\n');
  await put(svc.workspace, 'list.md', '---\n- a\n- b\n---\nBody\n');
  await put(svc.workspace, 'plain.md', 'Intro\n\n---\nnot: frontmatter\n---\n');
  const a = await svc.call('preview_file', { path: 'a.md' });
  t.same(a.body.answer, { kind: 'markdown', size: 45, content: '# Heading\n', frontmatter: { title: 'Report', tags: ['x', 'y'] }, frontmatter_error: null, truncated: false });
  const bad = await svc.call('preview_file', { path: 'bad.md' });
  t.equal(bad.body.success, true);
  const badAnswer = asKind(bad.body.answer, 'markdown');
  t.equal(badAnswer.frontmatter, null);
  t.type(badAnswer.frontmatter_error, 'string');
  t.equal(badAnswer.content, 'Body\n');
  const list = asKind((await svc.call('preview_file', { path: 'list.md' })).body.answer, 'markdown');
  t.equal(list.frontmatter_error, 'frontmatter is not a YAML mapping');
  const plain = asKind((await svc.call('preview_file', { path: 'plain.md' })).body.answer, 'markdown');
  t.equal(plain.frontmatter, null);
  t.equal(plain.frontmatter_error, null);
  t.equal(plain.content, 'Intro\n\n---\nnot: frontmatter\n---\n');
});

t.test('json and yaml: data, parse_error with success, size limit, alias bomb', async (t) => {
  await put(svc.workspace, 'ok.json', '{"a": [1, 2], "b": null}');
  await put(svc.workspace, 'bad.json', '{"a": [1, 2');
  await put(svc.workspace, 'ok.yaml', 'a: 1\nb: [x, y]\n');
  await put(svc.workspace, 'bad.yml', 'a: [1, 2\nb: }\n');
  await put(svc.workspace, 'deep.json', `${'['.repeat(5000)}${']'.repeat(5000)}`);
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 10; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
  await put(svc.workspace, 'bomb.yaml', `${bomb.join('\n')}\n`);
  const huge = await put(svc.workspace, 'huge.json', '');
  await truncate(huge, 32 * 1024 * 1024 + 1);

  const ok = (await svc.call('preview_file', { path: 'ok.json' })).body;
  t.same(ok.answer, { kind: 'json', size: 24, content: '{"a": [1, 2], "b": null}', data: { a: [1, 2], b: null }, parse_error: null, truncated: false });
  for (const path of ['bad.json', 'bad.yml', 'bomb.yaml', 'deep.json', 'huge.json']) {
    const res = await svc.call('preview_file', { path });
    t.equal(res.body.success, true, `${path}: success stays true`);
    const answer = asKind(res.body.answer, 'json', 'yaml');
    t.equal(answer.data, null, `${path}: no data`);
    t.type(answer.parse_error, 'string', `${path}: parse_error set`);
  }
  const hugeAnswer = asKind((await svc.call('preview_file', { path: 'huge.json' })).body.answer, 'json');
  t.match(hugeAnswer.parse_error, /32 MiB/);
  t.equal(hugeAnswer.truncated, true);
  const yaml = asKind((await svc.call('preview_file', { path: 'ok.yaml' })).body.answer, 'yaml');
  t.same(yaml.data, { a: 1, b: ['x', 'y'] });
  t.equal(yaml.kind, 'yaml');
});

t.test('csv: header, quoted newlines, windows and has_more, tsv', async (t) => {
  const lines = ['id,text'];
  for (let i = 0; i < 10; i++) lines.push(`${i},"line ${i}\nsecond ""quoted"", part"`);
  await put(svc.workspace, 'data/q.csv', `${lines.join('\n')}\n`);
  await put(svc.workspace, 'data/t.tsv', 'a\tb\n1\t2\n');

  const first = asKind((await svc.call('preview_file', { path: 'data/q.csv', limit: 3 })).body.answer, 'csv');
  t.same(first, {
    kind: 'csv', size: first.size, columns: ['id', 'text'], offset: 0, limit: 3, has_more: true,
    rows: [0, 1, 2].map((i) => [String(i), `line ${i}\nsecond "quoted", part`]),
  });
  const next = asKind((await svc.call('preview_file', { path: 'data/q.csv', offset: 3, limit: 3 })).body.answer, 'csv');
  t.same(next.rows.map((r) => r[0]), ['3', '4', '5'], 'the next page starts at offset + rows returned');
  const last = asKind((await svc.call('preview_file', { path: 'data/q.csv', offset: 8, limit: 5 })).body.answer, 'csv');
  t.same(last.rows.map((r) => r[0]), ['8', '9']);
  t.equal(last.has_more, false);
  const exact = asKind((await svc.call('preview_file', { path: 'data/q.csv', offset: 7, limit: 3 })).body.answer, 'csv');
  t.equal(exact.has_more, false, 'a window ending at the last row has no more');
  const beyond = asKind((await svc.call('preview_file', { path: 'data/q.csv', offset: 100 })).body.answer, 'csv');
  t.same(beyond.rows, []);
  const tsv = asKind((await svc.call('preview_file', { path: 'data/t.tsv' })).body.answer, 'csv');
  t.same([tsv.columns, tsv.rows], [['a', 'b'], [['1', '2']]]);
});

t.test('csv: every window matches a full csv-parse of a tricky file', async (t) => {
  // BOM, empty lines, quoted newlines and delimiters, escaped quotes, quotes mid-field, ragged rows;
  // once with LF and once with CRLF line ends (csv-parse detects the record delimiter per file).
  const lf = '\uFEFFname,note\n\na,"x\ny, z"\nb,say ""hi""\n\n\nc,ab"c\nd,"q ""quoted"" \n done",extra\n"e\n",\n,\nf\n"g","h"';
  for (const [name, text] of [['lf.csv', lf], ['crlf.csv', lf.replace(/\n/g, '\r\n')]] as const) {
    await put(svc.workspace, name, text);
    const [header, ...all] = parseCsvSync(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][];
    t.equal(all.length, 8, `${name}: the oracle sees 8 rows`);
    for (let offset = 0; offset <= all.length + 1; offset++) {
      const answer = asKind((await svc.call('preview_file', { path: name, offset, limit: 2 })).body.answer, 'csv');
      t.same([answer.columns, answer.rows, answer.has_more], [header, all.slice(offset, offset + 2), offset + 2 < all.length], `${name}: window at ${offset}`);
    }
  }
});

t.test('parquet: several row groups, window across groups, schema from metadata', async (t) => {
  await writeParquetFixture(join(svc.workspace, 'data/p.parquet'), 1000, 100);
  const res = await svc.call('preview_file', { path: 'data/p.parquet', offset: 250, limit: 100 });
  t.equal(res.body.success, true);
  const answer = asKind(res.body.answer, 'parquet');
  t.equal(answer.kind, 'parquet');
  t.equal(answer.row_count, 1000);
  t.equal(answer.row_group_count, 10);
  t.same(answer.columns, ['id', 'name', 'big', 'score']);
  t.same(answer.column_schema, [
    { name: 'id', type: 'Int32', nullable: false },
    { name: 'name', type: 'Utf8', nullable: true },
    { name: 'big', type: 'Int64', nullable: false },
    { name: 'score', type: 'Float64', nullable: false },
  ]);
  const rows = answer.rows;
  t.equal(rows.length, 100);
  t.same(rows[0], [250, 'name-250', 250_000_000_000_000, 62.5]);
  t.same(rows[2], [252, null, 252_000_000_000_000, 63], 'nulls stay null');
  t.same(rows[99]?.[0], 349);
  t.equal(answer.has_more, true);
  const tail = asKind((await svc.call('preview_file', { path: 'data/p.parquet', offset: 990, limit: 50 })).body.answer, 'parquet');
  t.same(tail.rows.map((r) => r[0]), [990, 991, 992, 993, 994, 995, 996, 997, 998, 999]);
  t.equal(tail.has_more, false);
  const past = asKind((await svc.call('preview_file', { path: 'data/p.parquet', offset: 5000 })).body.answer, 'parquet');
  t.same(past.rows, []);
  await put(svc.workspace, 'data/broken.parquet', 'not parquet at all');
  const broken = await svc.call('preview_file', { path: 'data/broken.parquet' });
  t.equal(broken.body.success, false);
  t.match(broken.body.answer, /^ValueError: cannot read Parquet file/);
});

t.test('unsupported, missing, directories and argument limits', async (t) => {
  await put(svc.workspace, 'blob.bin', new Uint8Array(300));
  t.same((await svc.call('preview_file', { path: 'blob.bin' })).body.answer, { kind: 'unsupported', size: 300 });
  t.same((await svc.call('preview_file', { path: 'nope.txt' })).body, { success: false, metadata: {}, answer: 'FileNotFoundError: no such file: nope.txt' });
  await put(svc.workspace, 'dir/x.txt', 'x');
  t.match((await svc.call('preview_file', { path: 'dir' })).body.answer, /^IsADirectoryError: /);
  for (const args of [{ path: 'blob.bin', limit: 0 }, { path: 'blob.bin', limit: 5001 }, { path: 'blob.bin', offset: -1 }, { path: 'blob.bin', extra: 1 }, {}]) {
    t.equal((await svc.call('preview_file', args)).status, 422, JSON.stringify(args));
  }
  t.equal((await svc.call('preview_file', { path: 'blob.bin', limit: 5000 })).status, 200);
});

t.test('preview_file over SSE and MCP', async (t) => {
  await put(svc.workspace, 'r.csv', 'a,b\n1,2\n');
  const expected = { kind: 'csv', size: 8, columns: ['a', 'b'], rows: [['1', '2']], offset: 0, limit: 200, has_more: false };
  const sse = await svc.events('preview_file', { path: 'r.csv' });
  t.same(sse.events, [{ kind: 'result', answer: expected, success: true, metadata: {} }]);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'preview_file', arguments: { path: 'r.csv' } });
  t.same(result.structuredContent, { answer: expected, success: true, metadata: {} });
  const missing = await mcp.callTool({ name: 'preview_file', arguments: { path: 'gone.csv' } });
  t.equal(missing.isError, true);
});
