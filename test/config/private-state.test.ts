import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { readToken } from '../../supervisor/common/token-store.js';
import { serveCli, type ServeOutcome } from '../helpers/serve-cli.js';


async function makeWorkspace(t: Test): Promise<string> {
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'taskyard-private-')));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  await mkdir(join(workspace, '.taskyard'), { mode: 0o700 });
  return workspace;
}

/** Runs `taskyard serve` on `workspace` until it listens, exits or passes the bound. */
async function serve(t: Test, workspace: string, args: string[]): Promise<{ outcome: ServeOutcome; output: () => string }> {
  const serving = serveCli(t, ['--workspace', workspace, ...args]);
  return { outcome: await serving.outcome, output: serving.output };
}

t.test('a FIFO at the task index file is reported and replaced; the service starts', async (t) => {
  const workspace = await makeWorkspace(t);
  const index = join(workspace, '.taskyard', 'task-index');
  execFileSync('mkfifo', [index]);
  const run = await serve(t, workspace, ['--token', 'private-token']);
  t.match(run.outcome, { url: /^http:/ }, `the service listens (${run.output()})`);
  t.match(run.output(), `the task index file ${index} was a named pipe, not a regular file; it was removed`);
  if (!('url' in run.outcome)) return;
  t.equal((await fetch(`${run.outcome.url}/health`, { headers: { authorization: 'Bearer private-token' } })).status, 200);
  const submitted = await fetch(`${run.outcome.url}/jobs/list_task_statuses`, { method: 'POST', headers: { authorization: 'Bearer private-token' }, body: '{"arguments":{}}' });
  t.same(await submitted.json(), { answer: [], success: true, metadata: {} }, 'Task Jobs answer');
});

t.test('a FIFO at the token file stops the start with a message naming it', async (t) => {
  const workspace = await makeWorkspace(t);
  const token = join(workspace, '.taskyard', 'token');
  execFileSync('mkfifo', [token]);
  const run = await serve(t, workspace, []);
  t.same(run.outcome, { code: 1 }, 'serve exits at once');
  t.match(run.output(), `taskyard serve: the token file ${token} is not a regular file (named pipe); remove it and start again`);
  t.equal(await readToken(workspace), undefined, 'the CLI does not wait on it either: no token');
  t.ok((await lstat(token)).isFIFO(), 'the pipe is left for the operator');
});

t.test('a plain file where a private directory belongs stops the start with what to do', async (t) => {
  const workspace = await makeWorkspace(t);
  const runners = join(workspace, '.taskyard', 'runners');
  await writeFile(runners, 'not a directory');
  const run = await serve(t, workspace, ['--token', 'private-token']);
  t.same(run.outcome, { code: 1 });
  t.match(run.output(), `taskyard serve: ${runners} must be a directory of the service's private state, but it is a regular file; remove or move it away and start again`);
  t.notMatch(run.output(), /EEXIST/);

  const other = await realpath(await mkdtemp(join(tmpdir(), 'taskyard-private-')));
  t.teardown(() => rm(other, { recursive: true, force: true }));
  await writeFile(join(other, '.taskyard'), '');
  const whole = await serve(t, other, ['--token', 'private-token']);
  t.same(whole.outcome, { code: 1 });
  t.match(whole.output(), `${join(other, '.taskyard')} must be a directory of the service's private state, but it is a regular file`);
});
