import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { leanServeConfig } from '../helpers/serve-cli.js';
import { OPEN_SERVICE_NOTE } from '../../core/errors.js';

const CLI = join(PACKAGE_ROOT, 'dist', 'bin', 'cli.js');

interface Started {
  child: ChildProcess;
  url: string;
  output: string;
}

/** Runs `taskyard serve` until it prints its URL (or exits). */
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started | { code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { ...process.env, TASKYARD_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      // The last lines a start prints: how to call the service from another shell.
      const url = /console: (http:\/\/\S+)[\s\S]*the CLI finds this service through its workspace\)/.exec(output);
      if (url) resolve({ child, url: url[1]!, output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** For the starts after the first: Task runners and GPUs are not the point of this file. */
const lean = await leanServeConfig(t);

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

t.test('first start generates a 0600 token, prints it in the console URL, and reuses it', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-serve-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const first = await serve(['--workspace', workspace]);
  if (!('child' in first)) { t.fail(`did not start: ${first.output}`); return; }
  t.teardown(() => stop(first.child));
  const token = (await readFile(join(workspace, '.taskyard', 'token'), 'utf8')).trim();
  t.ok(token.length >= 32, 'a long random token');
  t.equal((await stat(join(workspace, '.taskyard', 'token'))).mode & 0o777, 0o600);
  t.match(first.url, `#token=${token}`);
  t.match(first.output, `call it from another shell with the taskyard CLI, e.g.:\n  export PATH="${join(PACKAGE_ROOT, 'bin')}:$PATH"; taskyard version --workspace ${JSON.stringify(workspace)}\n  or, in ${PACKAGE_ROOT.replace(/\/+$/, '')}: npx taskyard version --workspace ${JSON.stringify(workspace)}`, 'npm start / serve says how to call the CLI');
  t.notMatch(first.output, 'TASKYARD_TOKEN', 'the token is in the token file, where the CLI looks');
  const base = new URL(first.url).origin;
  t.equal((await fetch(`${base}/health`)).status, 401);
  t.equal((await fetch(`${base}/health`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  await stop(first.child);

  const second = await serve(['--workspace', workspace, '--config', lean]);
  if (!('child' in second)) { t.fail(`did not restart: ${second.output}`); return; }
  t.teardown(() => stop(second.child));
  t.match(second.url, `#token=${token}`, 'the same token after a restart');
});

t.test('--token, --token=, TASKYARD_TOKEN and --no-token; a token given is not left in the command line or environment of the service', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-serve-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  for (const [how, args, env] of [
    ['--token T', ['--token', 'argv-secret-7f3a'], {}],
    ['--token=T', ['--token=argv-secret-7f3a'], {}],
    ['TASKYARD_TOKEN', [], { TASKYARD_TOKEN: 'argv-secret-7f3a' }],
  ] as const) {
    const started = await serve(['--workspace', workspace, '--config', lean, ...args], env);
    if (!('child' in started)) { t.fail(`${how}: did not start: ${started.output}`); return; }
    t.teardown(() => stop(started.child));
    t.match(started.output, '(this service\'s token is not in its token file: set TASKYARD_TOKEN to it in that shell)', `${how}: the CLI hint says where the token goes`);
    const pid = started.child.pid!;
    for (const file of ['cmdline', 'environ']) {
      t.notOk((await readFile(`/proc/${pid}/${file}`, 'latin1')).includes('argv-secret-7f3a'), `${how}: not in /proc/<service>/${file}`);
    }
    const base = new URL(started.url).origin;
    t.equal((await fetch(`${base}/health`, { headers: { authorization: 'Bearer wrong' } })).status, 401, `${how}: another token is refused`);
    // What a shell command or a Task of the service's user finds in its parent's /proc entry, and in its own environment.
    const shell = await fetch(`${base}/jobs/shell`, {
      method: 'POST',
      headers: { authorization: 'Bearer argv-secret-7f3a', 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { command: 'tr "\\0" "\\n" < /proc/$PPID/cmdline; tr "\\0" "\\n" < /proc/$PPID/environ; ps -o args= -p $PPID; printf "own: %s\\n" "${TASKYARD_TOKEN-unset}"' } }),
    });
    const answer = (await shell.json()) as { success: boolean; answer: { stdout: string } };
    t.equal(answer.success, true, `${how}: the service takes its token`);
    t.notOk(answer.answer.stdout.includes('argv-secret-7f3a'), `${how}: a child finds no token in its parent's cmdline, environ or ps, nor in its own environment`);
    t.match(answer.answer.stdout, how === 'TASKYARD_TOKEN' ? /TASKYARD_TOKEN=\*{16}/ : /\*{16}/, `${how}: stars where it was`);
    if (how === 'TASKYARD_TOKEN') t.match(answer.answer.stdout, /^own: unset$/m, 'a shell command does not see the token taken from the environment');
    await stop(started.child);
  }

  const open = await serve(['--workspace', workspace, '--config', lean, '--no-token']);
  if (!('child' in open)) { t.fail(open.output); return; }
  t.teardown(() => stop(open.child));
  t.match(open.output, /no token: only requires_auth=false Jobs are public/);
  t.match(open.output, `note: the catalog is empty: ${OPEN_SERVICE_NOTE}`, '--no-token explains the empty catalog');
  const openBase = new URL(open.url).origin;
  t.equal((await fetch(`${openBase}/health`)).status, 200, 'no token needed');
  const catalog = (await (await fetch(`${openBase}/jobs`)).json()) as { answer: { total: number } };
  t.equal(catalog.answer.total, 0, 'default Jobs all require auth, so none is public');
  await stop(open.child);
});

t.test('configuration and flag errors stop the start with exit 2 and name the problem', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-serve-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cfg = join(dir, 'bad.yaml');
  await writeFile(cfg, 'service:\n  port: 99999\n  colour: blue\n  prot: 1\nexecutor:\n  kind: slurmm\n');
  const bad = await serve(['--config', cfg, '--workspace', dir]);
  t.notOk('child' in bad);
  if ('code' in bad) {
    t.equal(bad.code, 2);
    t.match(bad.output, /service\.port: must be <= 65535/);
    t.match(bad.output, /service\.colour: unknown field; known keys here: host, port, workspace, token, /);
    t.match(bad.output, 'service.prot: unknown field; did you mean service.port?');
    t.match(bad.output, 'executor.kind: must be one of "local", "slurm" (got "slurmm")');
  }
  const flags = await serve(['--port', 'eighty']);
  t.match(flags, { code: 2, output: /--port must be an integer/ });
  const both = await serve(['--token', 'x', '--no-token']);
  t.match(both, { code: 2, output: /exclude each other/ });
  const unknown = await serve(['--colour', 'blue']);
  t.match(unknown, { code: 2, output: /Unknown option '--colour'/ });
});
