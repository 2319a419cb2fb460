import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { ok } from '../../schemas/job-response.js';
import { PACKAGE_VERSION } from '../../core/build-info.js';
import { defineJob } from '../../core/job.js';
import { machineCapability } from '../../app/machine-capability.js';
import { parseReply } from '../helpers/jobs-client.js';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService } from '../helpers/service.js';

/** A Job that answers its arguments, to see what the CLI made of each flag. */
const echoArgs = defineJob({
  name: 'echo_args',
  output: Type.Unknown(),
  description: 'Answers its arguments.',
  input: Type.Object(
    {
      task_id: Type.Optional(Type.String()),
      count: Type.Optional(Type.Integer()),
      verbose: Type.Optional(Type.Boolean()),
      tags: Type.Optional(Type.Array(Type.String())),
      options: Type.Optional(Type.Object({}, { additionalProperties: true })),
    },
    { additionalProperties: false },
  ),
  run: async (args) => ok(args),
});

const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-home-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
const svc = await startTestService(t, { capabilities: [machineCapability, () => ({ jobs: [echoArgs] })] });
const remote = await startTestService(t, { token: 'remote-token' });

/** Runs the built CLI as a real process; HOME is a temp dir so no real token file is read. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { HOME: home, TASKYARD_URL: svc.url, TASKYARD_TOKEN: svc.token ?? '', ...env });
}

t.test('version', async (t) => {
  const run = await cli(['version']);
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { answer: PACKAGE_VERSION, success: true, metadata: { version: PACKAGE_VERSION } });
});

t.test('shell with typed fields, --json, failure and timeout', async (t) => {
  const good = await cli(['shell', '--command', 'echo $((40 + 2))', '--timeout', '5']);
  t.equal(good.code, 0, good.stderr);
  t.match(JSON.parse(good.stdout), { success: true, answer: { stdout: '42\n', exit_code: 0 } });

  const json = await cli(['shell', '--json', '{"command":"printf raw"}']);
  t.match(JSON.parse(json.stdout), { success: true, answer: { stdout: 'raw' } });

  const failing = await cli(['shell', '--command', 'exit 7']);
  t.equal(failing.code, 1, 'a failed Job exits 1');
  t.match(JSON.parse(failing.stdout), { success: false, answer: { exit_code: 7 } });

  const slow = await cli(['shell', '--command', 'sleep 30', '--timeout', '0.5']);
  t.equal(slow.code, 1);
  t.match(JSON.parse(slow.stdout), { success: false, answer: { exit_code: null, stderr: /Command timed out after 0\.5 seconds/ } });
});

t.test('flags are converted by the Job schema', async (t) => {
  const run = await cli(['echo_args', '--task-id', '0042', '--count', '3', '--verbose', '--tags', 'a', '--tags', 'b', '--options', '{"k":1}']);
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout).answer, { task_id: '0042', count: 3, verbose: true, tags: ['a', 'b'], options: { k: 1 } });
});

t.test('--stream prints each event as a JSON line and exits by the result', async (t) => {
  const good = await cli(['shell', '--command', 'echo streamed', '--stream']);
  t.equal(good.code, 0, good.stderr);
  const lines = good.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(lines.at(-1), { kind: 'result', success: true, answer: { stdout: 'streamed\n' } });
  const bad = await cli(['shell', '--command', 'exit 1', '--stream']);
  t.equal(bad.code, 1);
  t.match(JSON.parse(bad.stdout.trim().split('\n').at(-1)!), { kind: 'result', success: false });
});

t.test('help', async (t) => {
  const general = await cli(['--help']);
  t.equal(general.code, 0);
  t.match(general.stdout, /usage: taskyard <command | job>/);
  t.match(general.stdout, /--stream/);
  t.match(general.stdout, /^ {2}machine_status\s/m, 'lists the Jobs of the running service');
  const shell = await cli(['shell', '--help']);
  t.equal(shell.code, 0);
  t.match(shell.stdout, /--command <string>\s+\(required, min length 1\)/);
  t.match(shell.stdout, /--timeout <number>\s+\(default 30, > 0, <= 300\)/);
});

t.test('usage errors exit 2 and say what is valid', async (t) => {
  const unknownField = await cli(['shell', '--comand', 'ls']);
  t.equal(unknownField.code, 2);
  t.match(unknownField.stderr, /unknown parameter --comand/);
  t.match(unknownField.stderr, /--command <string>/);
  t.match(unknownField.stderr, /--timeout <number>/);

  const unknownJob = await cli(['no_such_job']);
  t.equal(unknownJob.code, 2);
  t.match(unknownJob.stderr, /unknown Job "no_such_job"; available Jobs: .*version/);

  const badValue = await cli(['shell', '--command', 'ls', '--timeout', 'soon']);
  t.equal(badValue.code, 2);
  t.match(badValue.stderr, /--timeout expects number, got "soon"/);

  const noJob = await cli([]);
  t.equal(noJob.code, 2);
  t.match(noJob.stderr, /name a Job to call/);

  t.equal((await cli(['shell', '--command'])).code, 2, 'a flag without its value');
});

t.test('refused or impossible calls exit 1 with the detail', async (t) => {
  const invalid = await cli(['shell', '--command', 'true', '--timeout', '0']);
  t.equal(invalid.code, 1);
  t.match(invalid.stderr, /HTTP 422[\s\S]*arguments\.timeout/);

  const wrongToken = await cli(['version', '--token', 'wrong']);
  t.equal(wrongToken.code, 1);
  t.match(wrongToken.stderr, 'HTTP 401: Invalid bearer token');

  const unreachable = await cli(['version', '--url', 'http://127.0.0.1:1']);
  t.equal(unreachable.code, 1);
  t.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:1/);
});

t.test('the token file of the workspace is the default token', async (t) => {
  const workspace = join(home, 'ws');
  await mkdir(join(workspace, '.taskyard'), { recursive: true });
  await writeFile(join(workspace, '.taskyard', 'token'), `${svc.token}\n`, { mode: 0o600 });
  const run = await cli(['version', '--workspace', workspace], { TASKYARD_TOKEN: '' });
  t.equal(run.code, 0, run.stderr);
  t.equal((await cli(['version'], { TASKYARD_TOKEN: '' })).code, 1, 'no token file in the default workspace: 401');
});

t.test('--target connects directly with the target token', async (t) => {
  const viaFlag = await cli(['shell', '--command', 'pwd', '--target', remote.url, '--token', 'remote-token']);
  t.equal(viaFlag.code, 0, viaFlag.stderr);
  t.equal(JSON.parse(viaFlag.stdout).answer.stdout, `${remote.workspace}\n`, 'ran on the target, not on the local service');

  const viaEnv = await cli(['version', '--target', remote.url.replace('http://', '')], { TASKYARD_TARGET_TOKEN: 'remote-token' });
  t.equal(viaEnv.code, 0, viaEnv.stderr);

  const localTokenOnly = await cli(['version', '--target', remote.url]);
  t.equal(localTokenOnly.code, 1, 'the local token is never sent to a target');
  t.match(localTokenOnly.stderr, 'Invalid bearer token');
});

t.test('--stream: a stream that ends without a result is a failure', async (t) => {
  // A service that publishes one Job and drops its stream after a progress event.
  const catalog = { items: [{ name: 'cut_short', description: 'x', input_schema: { type: 'object', properties: {} } }], total: 1 };
  const server = createServer((req, res) => {
    if (req.url === '/jobs') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: catalog, success: true, metadata: {} }));
      return;
    }
    const progress = { kind: 'progress', name: 'step', started_at: null, finished_at: null, percentage: 50 };
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: progress\ndata: ${JSON.stringify(progress)}\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const run = await cli(['cut_short', '--stream', '--url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`]);
  t.equal(run.code, 1);
  t.match(JSON.parse(run.stdout.trim()), { kind: 'progress', percentage: 50 }, 'the events that came are printed');
  t.match(run.stderr, 'the stream ended without a result event');
});

t.test('submit takes the Task inputs as flags; wait_task follows it', async (t) => {
  // The full service of the --target test runs the Tasks (the one above has only the machine Jobs).
  const env = { TASKYARD_URL: remote.url, TASKYARD_TOKEN: 'remote-token' };
  const submitted = await cli(['submit', '--task', 'demo', '--x', '2', '--y', '3', '--task-name', 'from-cli'], env);
  t.equal(submitted.code, 0, submitted.stderr);
  const handle = parseReply('submit', submitted.stdout).answer;
  t.equal(handle.task_id, 'base#demo#from-cli');
  const waited = await cli(['wait_task', '--task-id', handle.task_id, '--run-id', handle.run_id], env);
  t.equal(waited.code, 0, waited.stderr);
  t.match(JSON.parse(waited.stdout).answer, { state: 'succeeded', result: { result: 5, branch: 'different', operands: ['x', 'y'] } });
  const failing = await cli(['submit', '--task', 'demo', '--x', '1', '--y', '1', '--fail'], env);
  const failed = parseReply('submit', failing.stdout).answer;
  const end = await cli(['wait_task', '--task-id', failed.task_id, '--run-id', failed.run_id], env);
  t.equal(end.code, 1, 'a failed Task makes wait_task exit 1');
  t.match(JSON.parse(end.stdout).answer, { state: 'failed', error: 'RuntimeError: Demo failure requested', exit_code: 1 });
  const current = await cli(['wait_task', '--task-id', handle.task_id], env);
  t.equal(current.code, 0, current.stderr);
  t.match(current.stderr, `waiting for run ${handle.run_id} (the current run of ${handle.task_id}, succeeded)`, 'without --run-id: the current run');
  t.match(JSON.parse(current.stdout).answer, { run_id: handle.run_id, state: 'succeeded' });
});
