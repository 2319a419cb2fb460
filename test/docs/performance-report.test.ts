import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';

/** bench/write-report.js as the docs run it: run-all's output on its stdin, the page at `out`. */
function writeReport(out: string, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'dist', 'bench', 'write-report.js'), '--out', out]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const KEPT = '<!-- kept by write-report: figures recorded by hand -->\n## Figures carried over\n\n| bench | figure |\n|---|---|\n| `tasks` | 2 ms |\n';

t.test('bench/write-report.ts writes each bench it reads, with date and machine, and keeps the rest', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-report-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, 'figures.md');
  await writeFile(out, `# old header\n\n${KEPT}`);
  const first = '\n##### bench/http.ts\nhealth 95.6k req/s\n\n##### bench/tasks.ts\nsubmit p50 2 ms\n';
  const run1 = await writeReport(out, first);
  t.equal(run1.code, 0, run1.stderr);
  t.equal(run1.stdout, first, 'what the benches print passes through');
  const page1 = await readFile(out, 'utf8');
  t.match(page1, /^# Performance figures\n/, 'the header is written anew');
  t.match(page1, /## bench\/http\.ts\n\n<!-- bench:http -->\nMeasured \d{4}-\d\d-\d\d \d\d:\d\d UTC on \d+ cores \([^)]*\), [\d.]+ GiB memory, Node v\d+\.\d+\.\d+, Linux \S+, load average [\d. ]+ at the end\.\n\n```text\nhealth 95\.6k req\/s\n```\n<!-- \/bench:http -->/, 'a section with date and machine');
  t.match(page1, /<!-- bench:tasks -->[\s\S]*submit p50 2 ms/, 'each bench its own section');
  t.ok(page1.endsWith(KEPT), 'the figures recorded by hand stay, at the end');

  const run2 = await writeReport(out, '##### bench/tasks.ts\nsubmit p50 3 ms\n');
  t.equal(run2.code, 0, run2.stderr);
  const page2 = await readFile(out, 'utf8');
  t.match(page2, /<!-- bench:tasks -->[\s\S]*submit p50 3 ms[\s\S]*<!-- \/bench:tasks -->/, 'a bench run again replaces its section');
  t.notMatch(page2, /submit p50 2 ms/, 'its old figures are gone');
  t.match(page2, /<!-- bench:http -->[\s\S]*health 95\.6k req\/s/, 'a bench that did not run keeps its figures');
  t.ok(page2.endsWith(KEPT), 'the kept part still ends the page');

  const run3 = await writeReport(out, 'no bench here\n');
  t.equal(run3.code, 2, 'input without a bench is refused');
  t.match(run3.stderr, /pipe run-all\.js into it/, 'saying what to do');
  t.equal(await readFile(out, 'utf8'), page2, 'and the page is left as it was');
});
