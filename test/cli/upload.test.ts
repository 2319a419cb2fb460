import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseUploadFields } from '../../bin/upload-command.js';
import { startTestService } from '../helpers/service.js';

const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const svc = await startTestService(t);
const cwd = await mkdtemp(join(tmpdir(), 'taskyard-upload-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));

/** The built CLI as a real process in a scratch directory (HOME too: no token file of the machine's). */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: cwd, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'upload', ...args], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

t.test('taskyard upload stages each file and prints its path and checksum; --to moves them into place', async (t) => {
  await writeFile(join(cwd, 'train.csv'), 'a,b\n1,2\n');
  await writeFile(join(cwd, 'test.csv'), 'a,b\n3,4\n');
  const staged = await cli(['train.csv', 'test.csv', '--dir', 'tmp/day1']);
  t.equal(staged.code, 0, staged.stderr);
  const lines = staged.stdout.trim().split('\n');
  t.equal(lines.length, 2, 'one line a file');
  t.match(lines[0], new RegExp(`^tmp/day1/.*/train\\.csv  sha256 ${sha('a,b\n1,2\n')}  8 bytes$`));
  const path = lines[0]!.split('  ')[0]!;
  t.equal(await readFile(join(svc.workspace, path), 'utf8'), 'a,b\n1,2\n', 'the staged file holds the bytes');

  const json = await cli(['train.csv', '--output', 'json']);
  t.match(JSON.parse(json.stdout), [{ path: /^tmp\/.*\/train\.csv$/, sha256: sha('a,b\n1,2\n'), size: 8 }], '--output json: the FileCopy answers');

  const placed = await cli(['test.csv', '--to', 'data']);
  t.equal(placed.code, 0, placed.stderr);
  t.match(placed.stdout, /^data\/test\.csv  sha256 [0-9a-f]{64}  8 bytes$/m, 'printed where it went');
  t.equal(await readFile(join(svc.workspace, 'data/test.csv'), 'utf8'), 'a,b\n3,4\n', 'moved into place');
  const again = await cli(['test.csv', '--to', 'data']);
  t.not(again.code, 0, 'an occupied destination fails');
  t.match(again.stderr, /the files are staged \(tmp\/.*test\.csv\) but moving them failed: FileExistsError: data\/test.csv exists/, 'and says where the file is');
});

t.test('taskyard upload refuses what it cannot upload, saying what to do', async (t) => {
  await mkdir(join(cwd, 'folder'), { recursive: true });
  t.match((await cli(['missing.csv'])).stderr, /missing\.csv does not exist/);
  t.match((await cli(['folder'])).stderr, /folder is not a file: upload files one by one \(a directory: pack it first/);
  t.throws(() => parseUploadFields([]), /name at least one FILE/);
  t.throws(() => parseUploadFields(['a', '--dir', 'data']), /--dir must be under tmp\//);
  t.throws(() => parseUploadFields(['a', '--to']), /--to needs a value/);
  t.throws(() => parseUploadFields(['a', '--force']), /unknown option --force/);
});
