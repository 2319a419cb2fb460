import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsvSync } from 'csv-parse/sync';
import t from 'tap';
import type { CsvRowCount } from '../../schemas/csv-rows.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';
import { put } from './fixtures.js';

const MiB = 1024 * 1024;

// One service for the file: each test counts files of its own names.
const svc = await startTestService(t);

async function count(path: string, extra: Record<string, unknown> = {}): Promise<CsvRowCount> {
  const res = await svc.call('count_csv_rows', { path, ...extra });
  if (!res.body.success) throw new Error(`count_csv_rows ${path} failed: ${JSON.stringify(res.body.answer)}`);
  return res.body.answer as CsvRowCount;
}

t.test('rows as preview_file pages them: quoted newlines, empty lines, no final newline, tsv', async (t) => {
  const lines = ['id,text'];
  for (let i = 0; i < 10; i++) lines.push(`${i},"line ${i}\nsecond ""quoted"", part"`);
  await put(svc.workspace, 'data/q.csv', `${lines.join('\n')}\n`);
  t.same(await count('data/q.csv'), { path: 'data/q.csv', size: Buffer.byteLength(`${lines.join('\n')}\n`), rows: 10, exact: true, scanned_bytes: Buffer.byteLength(`${lines.join('\n')}\n`) }, 'a quoted newline does not end a row');

  // BOM, empty lines, quotes mid-field, ragged rows, no final newline; LF and CRLF: csv-parse is the oracle.
  const tricky = '\uFEFFname,note\n\na,"x\ny, z"\nb,say ""hi""\n\n\nc,ab"c\nd,"q ""quoted"" \n done",extra\n"e\n",\n,\nf\n"g","h"';
  for (const [name, text] of [['lf.csv', tricky], ['crlf.csv', tricky.replace(/\n/g, '\r\n')]] as const) {
    await put(svc.workspace, name, text);
    const oracle = (parseCsvSync(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][]).length - 1;
    const answer = await count(name);
    t.same([answer.rows, answer.exact], [oracle, true], `${name}: ${oracle} rows, as csv-parse reads them`);
    const preview = await svc.call('preview_file', { path: name, limit: 5000 });
    t.equal((preview.body.answer as { rows: unknown[] }).rows.length, answer.rows, `${name}: preview_file pages as many rows`);
  }
  await put(svc.workspace, 'data/t.tsv', 'a\tb\n1\t"2\n3"\n4\t5\n');
  t.equal((await count('data/t.tsv')).rows, 2, 'a .tsv file is counted with tabs');
});

t.test('an empty file and a header alone have no rows', async (t) => {
  await put(svc.workspace, 'empty.csv', '');
  await put(svc.workspace, 'header.csv', 'a,b,c\n');
  await put(svc.workspace, 'header-no-newline.csv', 'a,b,c');
  t.same(await count('empty.csv'), { path: 'empty.csv', size: 0, rows: 0, exact: true, scanned_bytes: 0 });
  t.same([(await count('header.csv')).rows, (await count('header-no-newline.csv')).rows], [0, 0]);
});

t.test('a large file: bounded by max_bytes, a lower bound that says so; counted whole by default', async (t) => {
  const row = 'x'.repeat(99) + '\n'; // 100 bytes a row
  const rows = 40_000; // 4 MB
  await put(svc.workspace, 'big.csv', `h\n${row.repeat(rows)}`);
  const bounded = await count('big.csv', { max_bytes: MiB });
  t.equal(bounded.exact, false, 'stopped before the end');
  t.ok(bounded.scanned_bytes >= MiB && bounded.scanned_bytes < 4_000_002, `scanned ${bounded.scanned_bytes} bytes, at least the bound`);
  t.ok(bounded.rows > 0 && bounded.rows < rows, `${bounded.rows} rows is a lower bound`);
  t.same(await count('big.csv'), { path: 'big.csv', size: 4_000_002, rows, exact: true, scanned_bytes: 4_000_002 });
  const tooSmall = await svc.call('count_csv_rows', { path: 'big.csv', max_bytes: 1000 });
  t.equal(tooSmall.status, 422, 'a bound under 1 MiB is refused by validation');
});

t.test('bad paths get the preview refusals, and the service keeps answering', async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'csv-rows-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await writeFile(join(outside, 'secret.csv'), 'a\n1\n');
  await symlink(join(outside, 'secret.csv'), join(svc.workspace, 'escape.csv'));
  await put(svc.workspace, 'inside/real.csv', 'a\n1\n2\n');
  await symlink('real.csv', join(svc.workspace, 'inside/alias.csv'));
  execFileSync('mkfifo', [join(svc.workspace, 'pipe.csv')]);
  const server = createServer();
  server.listen(join(svc.workspace, 'sock.csv'));
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await put(svc.workspace, 'notes.txt', 'a\n1\n');
  await mkdir(join(svc.workspace, 'folder.csv'));

  const cases: Array<[string, string]> = [
    ['../x.csv', 'PermissionError: path escapes the workspace: ../x.csv'],
    ['/etc/passwd.csv', 'PermissionError: absolute paths are not accepted: /etc/passwd.csv'],
    ['escape.csv', 'PermissionError: path escapes the workspace: escape.csv'],
    ['.taskyard/x.csv', 'PermissionError: path is private to the service: .taskyard/x.csv'],
    ['pipe.csv', 'PermissionError: not a regular file: pipe.csv'],
    ['sock.csv', 'PermissionError: not a regular file: sock.csv'],
    ['missing.csv', 'FileNotFoundError: no such file: missing.csv'],
    ['inside', 'ValueError: not a CSV file: inside (rows are counted in .csv and .tsv files)'],
    ['folder.csv', 'IsADirectoryError: is a directory: folder.csv'],
    ['notes.txt', 'ValueError: not a CSV file: notes.txt (rows are counted in .csv and .tsv files)'],
  ];
  for (const [path, answer] of cases) {
    const res = await svc.call('count_csv_rows', { path });
    t.same([res.status, res.body], [200, { success: false, metadata: {}, answer }], `${path}: ${answer}`);
    t.notOk(JSON.stringify(res.body).includes(outside), 'no path outside the workspace is answered');
  }
  t.same((await count('inside/alias.csv')).rows, 2, 'a link inside the workspace is counted as its target');
  t.equal((await count('inside/real.csv')).rows, 2, 'and the service keeps answering');
});

t.test('over MCP: the same answer as structuredContent, a failure as isError', async (t) => {
  await put(svc.workspace, 'mcp.csv', 'a,b\n1,"x\ny"\n2,z\n');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const good = await mcp.callTool({ name: 'count_csv_rows', arguments: { path: 'mcp.csv' } });
  t.equal(good.isError, false);
  t.same((good.structuredContent as { answer: CsvRowCount }).answer, { path: 'mcp.csv', size: 16, rows: 2, exact: true, scanned_bytes: 16 });
  const bad = await mcp.callTool({ name: 'count_csv_rows', arguments: { path: '../mcp.csv' } });
  t.equal(bad.isError, true);
  t.same((bad.structuredContent as { answer: string }).answer, 'PermissionError: path escapes the workspace: ../mcp.csv');
});
