import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseFields } from '../../bin/download-command.js';
import { startTestService } from '../helpers/service.js';
import { makeWorkspace, submitOk, waitTask, writeFixturePlugin } from '../tasks/task-helpers.js';

const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const workspace = await makeWorkspace(t);
await writeFixturePlugin(workspace);
const svc = await startTestService(t, { workspace });
const cwd = await mkdtemp(join(tmpdir(), 'taskyard-download-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));

/** The built CLI as a real process, in a scratch directory; HOME is that directory too (no token file). */
function cli(args: string[]): Promise<CliRun> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: cwd, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'download', ...args], { cwd, env, timeout: 60_000, encoding: 'buffer' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: stdout.toString('latin1'), stderr: stderr.toString() });
    });
  });
}

t.test('taskyard download PATH [-o FILE] saves a workspace file', async (t) => {
  const data = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  await writeFile(join(svc.workspace, 'results.bin'), data);
  const plain = await cli(['results.bin']);
  t.equal(plain.code, 0, plain.stderr);
  t.ok((await readFile(join(cwd, 'results.bin'))).equals(data), 'saved under its own name');
  t.match(plain.stderr, /saved 300000 bytes to results\.bin/);
  const named = await cli(['results.bin', '-o', 'copy.bin']);
  t.equal(named.code, 0, named.stderr);
  t.ok((await readFile(join(cwd, 'copy.bin'))).equals(data));
  const stdout = await cli(['results.bin', '-o', '-']);
  t.ok(Buffer.from(stdout.stdout, 'latin1').equals(data), '"-" writes to standard output');

  const missing = await cli(['nothing.txt', '-o', 'nothing.txt']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /HTTP 404: no such file: nothing\.txt/);
  const escape = await cli(['../etc/passwd']);
  t.equal(escape.code, 1);
  t.match(escape.stderr, /HTTP 422: path escapes the workspace/);
  t.notOk((await readdir(cwd)).some((n) => n.endsWith('.part') || n === 'nothing.txt' || n === 'passwd'), 'a failed download leaves no file');
});

t.test('taskyard download --task ID --artifact NAME fetches an artifact and checks its checksum', async (t) => {
  const handle = await submitOk(t, svc, { task: 'artifacts' });
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  const run = await cli(['--task', handle.task_id, '--artifact', 'greeting', '-o', 'greeting.txt']);
  t.equal(run.code, 0, run.stderr);
  t.equal(await readFile(join(cwd, 'greeting.txt'), 'utf8'), 'hello artifact\n');

  const unknown = await cli(['--task', handle.task_id, '--artifact', 'plot']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /has no artifact "plot" \(it has: greeting\)/);
  const noTask = await cli(['--task', 'base#demo#nope', '--artifact', 'x']);
  t.equal(noTask.code, 1);
  t.match(noTask.stderr, /KeyError/);

  // The file changed after the Task recorded it: the download is refused and not kept.
  await writeFile(join(svc.workspace, 'fixture', handle.task_id, 'out.txt'), 'tampered\n');
  const tampered = await cli(['--task', handle.task_id, '--artifact', 'greeting', '-o', 'tampered.txt']);
  t.equal(tampered.code, 1);
  t.match(tampered.stderr, /checksum differs/);
  t.notOk((await readdir(cwd)).includes('tampered.txt'));
});

t.test('taskyard download: usage errors exit 2 with the usage', async (t) => {
  // The CLI process once: a usage error exits 2 and prints the usage; --help prints it and exits 0.
  const run = await cli([]);
  t.equal(run.code, 2, 'download with nothing to fetch');
  t.match(run.stderr, /usage: taskyard download PATH/);
  t.match(run.stderr, /name a PATH, or --task and --artifact/);
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /--task TASK_ID --artifact NAME/);

  // Every other refused form, in process: the same parser raises the UsageError that becomes exit 2.
  for (const [args, message] of [
    [['a', 'b'], /one PATH at a time/],
    [['--task', 'x'], /--task and --artifact go together/],
    [['a', '--artifact', 'y', '--task', 'x'], /name a PATH, or --task and --artifact/],
    [['a', '-o'], /-o needs a value/],
    [['a', '--bogus'], /unknown option --bogus/],
  ] as const) {
    t.throws(() => parseFields(args), { name: 'UsageError', message }, `download ${args.join(' ')}`);
  }
  t.same(parseFields(['--task=x', '--artifact', 'y', '-o', '-']), { task: 'x', artifact: 'y', output: '-' }, 'and the accepted forms parse');
});
