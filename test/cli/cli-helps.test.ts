// The CLI's answers to a newcomer's mistakes (issue 28, item 6): each message names the fix.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { OPEN_SERVICE_NOTE } from '../../core/errors.js';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService } from '../helpers/service.js';
import { exited, SERVICE_PROCESS_TOKEN, startServiceProcess } from '../helpers/service-process.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-helps-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
const svc = await startTestService(t, { config: { jobs: { version: { enable_stream: false } } } });

/** The built CLI as a real process; HOME is a temp dir so no real workspace, token or address is used. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '', ...env });
}

t.test('an unknown Job: the closest names, from the catalog and from the 404 beside `Unknown job`', async (t) => {
  const typo = await cli(['verison']);
  t.equal(typo.code, 2);
  t.match(typo.stderr, /unknown Job "verison" \(did you mean version\?\); available Jobs: .*machine_status/);

  // The catalog lists `version`, but its /events route is closed: the service's 404 says why.
  const stream = await cli(['version', '--stream']);
  t.equal(stream.code, 1);
  t.match(stream.stderr, 'HTTP 404: Unknown job\nno public Job "version" here\nversion does not stream (enable_stream is false): call POST /jobs/version, without /events');
});

t.test('--no-token: the CLI says why the catalog is empty', async (t) => {
  // Only its catalog is asked: no runner is started ahead of need.
  const open = await startTestService(t, { token: null, config: { service: { runner_pool_size: 0 } } });
  const run = await cli(['version'], { TASKYARD_URL: open.url, TASKYARD_TOKEN: '' });
  t.equal(run.code, 2);
  t.match(run.stderr, 'unknown Job "version"; available Jobs: (none)');
  t.match(run.stderr, `The service lists no Jobs: ${OPEN_SERVICE_NOTE}.`);
  const help = await cli(['--help'], { TASKYARD_URL: open.url, TASKYARD_TOKEN: '' });
  t.equal(help.code, 0);
  t.match(help.stdout, `lists no Jobs: ${OPEN_SERVICE_NOTE}`);
});

t.test('taskyard --help lists every command, chat included', async (t) => {
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  for (const command of ['serve', 'submit', 'logs', 'run', 'plugin install', 'plugin uninstall', 'plugin list', 'plugin init', 'task run', 'sync push', 'download', 'upload', 'chat']) {
    t.match(help.stdout, new RegExp(`^ {2}taskyard ${command} `, 'm'), command);
  }
});

/** A server that counts the requests it gets: where a stale lock points, nobody may call. */
async function decoy(t: Test): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

t.test('the CLI finds a service on a non-default port through its workspace, and not a stopped one', async (t) => {
  const workspace = await mkdtemp(join(home, 'ws-'));
  const service = await startServiceProcess(t, workspace);
  const env = { TASKYARD_URL: '', TASKYARD_TOKEN: SERVICE_PROCESS_TOKEN };
  const found = await cli(['version', '--workspace', workspace], env);
  t.equal(found.code, 0, found.stderr);
  t.match(JSON.parse(found.stdout), { success: true });
  const explicit = await cli(['version', '--workspace', workspace, '--url', 'http://127.0.0.1:1'], env);
  t.match(explicit.stderr, /cannot reach http:\/\/127\.0\.0\.1:1:/, '--url wins over the workspace');

  // kill -9 leaves the lock behind with the dead service's address.
  service.child.kill('SIGKILL');
  await exited(service.child);
  const lock = join(workspace, '.taskyard', 'service.lock');
  t.ok(existsSync(lock), 'the stopped service left its lock');
  const stale = await cli(['version', '--workspace', workspace], env);
  t.notMatch(stale.stderr + stale.stdout, service.url, 'the stale address is not called');
  if (stale.code !== 0) t.match(stale.stderr, `(the default address: no taskyard service runs on the workspace ${workspace}; start one with \`taskyard serve\`, or pass --url or --workspace)`);

  // A lock whose pid now belongs to another process: the address in it is not used either.
  const other = await decoy(t);
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => sleeper.kill('SIGKILL'));
  const held = JSON.parse(await readFile(lock, 'utf8')) as Record<string, unknown>;
  await writeFile(lock, JSON.stringify({ ...held, pid: sleeper.pid, address: other.url }));
  await cli(['version', '--workspace', workspace], env);
  t.equal(other.hits(), 0, 'a pid reused by another process (its start time differs) is no service');
});

t.test('--output text: tables for listings, statuses and previews; shell output as printed; --stream as it comes', async (t) => {
  await mkdir(join(svc.workspace, 'data'), { recursive: true });
  await writeFile(join(svc.workspace, 'data', 'x.csv'), 'a,b\n1,2\n3,4\n');
  t.teardown(() => rm(join(svc.workspace, 'data'), { recursive: true, force: true }));
  const text = (args: string[]) => cli([...args, '--output', 'text']);

  const listing = await text(['list_entries', '--path', 'data']);
  t.equal(listing.code, 0, listing.stderr);
  t.match(listing.stdout, /^data\/ {2}\(1 entry\)\nNAME {3}KIND {2}SIZE {2}MODIFIED\nx\.csv {2}csv {3}12 B {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n$/);

  const preview = await text(['preview_file', '--path', 'data/x.csv']);
  t.equal(preview.stdout, 'a  b\n1  2\n3  4\n(rows 1-2)\n');

  const shell = await text(['shell', '--command', 'echo hi; echo err >&2; exit 3']);
  t.equal(shell.code, 1);
  t.equal(shell.stdout, 'hi\n--- stderr ---\nerr\n[exit code 3]\n');
  const streamed = await text(['shell', '--command', 'echo hi; echo err >&2', '--stream']);
  t.equal(streamed.code, 0, streamed.stderr);
  t.equal(streamed.stdout, 'hi\n[exit code 0]\n', '--stream: the output as it comes, then how it ended (not repeated)');
  t.match(streamed.stderr, 'err\n');

  const machine = await text(['machine_status']);
  t.match(machine.stdout, /^ {2}usage_percent: \d+(\.\d)?$/m, 'percentages are rounded');
  t.notMatch(machine.stdout, /usage_percent: \d+\.\d\d/);

  const handle = await svc.call('submit', { task: 'demo', x: 1, y: 2 });
  t.equal(handle.body.success, true);
  const { task_id, run_id } = handle.body.answer as { task_id: string; run_id: string };
  await svc.call('wait_task', { task_id, run_id });
  const statuses = await text(['list_task_statuses']);
  t.match(statuses.stdout, /^TASK ID +STATE +STEP +TIME +EXIT +ERROR\n/);
  t.match(statuses.stdout, new RegExp(`^${task_id.replace(/[#.]/g, '\\$&')} +succeeded +finish 100% done +\\d+\\.\\d s +0$`, 'm'));
  const status = await text(['status', '--task-id', task_id]);
  t.match(status.stdout, new RegExp(`^${task_id.replace(/[#.]/g, '\\$&')}  succeeded in \\d+\\.\\d s\\nresult: \\{"result":3,`));
});
