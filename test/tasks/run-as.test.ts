import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestService, TEST_TOKEN } from '../helpers/service.js';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';
import { submitOk, waitTask } from './task-helpers.js';

/** An unprivileged user every Debian system has; the tests need root to become it. */
const USER = 'nobody';
const NOBODY_UID = 65534;
const asRoot = userInfo().uid === 0 ? {} : { skip: 'needs root (to run Tasks as another user)' };

/** A plugin Task that tries what Task code must not manage: reading the token file and the service's /proc entry. */
const SPY_TASKS = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineTask } from 'taskyard/task';

const attempt = (path) => { try { return readFileSync(path, 'latin1'); } catch (err) { return err.code; } };

export default [
  defineTask({
    name: 'spy',
    taskType: 'spy',
    description: 'Reads what it can of the service: its token file, its environment and command line.',
    input: { type: 'object', properties: { service: { type: 'integer' } }, required: ['service'] },
    output: { type: 'object', properties: { uid: { type: 'integer' }, token_file: { type: 'string' }, environ: { type: 'string' }, cmdline: { type: 'string' } } },
    async run(input, ctx) {
      writeFileSync('written.txt', 'a Task still writes its own directory');
      await ctx.artifact('written', 'written.txt');
      return {
        uid: process.getuid(),
        token_file: attempt(join(ctx.workspace_path, '.taskyard', 'token')),
        environ: attempt('/proc/' + input.service + '/environ'),
        cmdline: attempt('/proc/' + input.service + '/cmdline'),
      };
    },
  }),
];
`;

/** A workspace as a root-run service has it: a generated token (0600) and the spy plugin installed. */
async function workspaceWithSpy(): Promise<string> {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-run-as-'));
  // The Tasks' user must be able to reach the workspace (mkdtemp makes it 0700).
  await chmod(workspace, 0o755);
  await mkdir(join(workspace, '.taskyard'), { mode: 0o700 });
  await writeFile(join(workspace, '.taskyard', 'token'), `${TEST_TOKEN}\n`, { mode: 0o600 });
  const plugin = join(workspace, '.taskyard', 'plugins', 'node_modules', 'taskyard-spy');
  await mkdir(plugin, { recursive: true, mode: 0o755 });
  await writeFile(join(plugin, 'package.json'), JSON.stringify({ name: 'taskyard-spy', version: '1.0.0', type: 'module', taskyard: { tasks: './tasks.js' } }));
  await writeFile(join(plugin, 'tasks.js'), SPY_TASKS);
  // The prefix's package.json is the list of installed plugins, as after `install_plugin`.
  await writeFile(join(workspace, '.taskyard', 'plugins', 'package.json'), JSON.stringify({ private: true, dependencies: { 'taskyard-spy': '1.0.0' } }));
  return workspace;
}

for (const pool of [0, 1]) {
  t.test(`service.run_as: a Task (runner pool ${pool}) and a shell command run as ${USER}, and reach neither the token nor the service's /proc`, asRoot, async (t) => {
    const workspace = await workspaceWithSpy();
    t.teardown(() => rm(workspace, { recursive: true, force: true }));
    const svc = await startTestService(t, { workspace, config: { service: { run_as: { user: USER }, runner_pool_size: pool } } });
    t.equal((await stat(join(workspace, '.taskyard'))).mode & 0o777, 0o711, '.taskyard/ can be passed through (plugin code) but not listed');

    const handle = await submitOk(t, svc, { task: 'spy', service: process.pid });
    const done = await waitTask(svc, handle);
    t.equal(done.status.state, 'succeeded', `the Task ran: ${done.status.error}`);
    t.match(done.status.result, { uid: NOBODY_UID, token_file: 'EACCES', environ: 'EACCES' }, 'as nobody: no token file, no environment of the service');
    t.notOk(JSON.stringify(done.status.result).includes(TEST_TOKEN), 'the token is nowhere in what it found');

    const shell = await svc.call('shell', { command: `id -u; cat .taskyard/token; cat /proc/${process.pid}/environ; ls .taskyard` });
    const out = shell.body.answer;
    t.equal(out.stdout.trim(), String(NOBODY_UID), 'the shell command runs as nobody and reads nothing');
    t.match(out.stderr, /\.taskyard\/token: Permission denied[\s\S]*environ: Permission denied[\s\S]*Permission denied/);
    t.notOk(JSON.stringify(shell.body).includes(TEST_TOKEN));
  });
}

t.test('service.run_as is checked at start: an unknown user, root', asRoot, async (t) => {
  await t.rejects(startTestService(t, { config: { service: { run_as: { user: 'no-such-user-taskyard' } } } }), { message: 'service.run_as.user: no user named "no-such-user-taskyard" on this machine' });
  await t.rejects(startTestService(t, { config: { service: { run_as: { user: 'root' } } } }), { message: 'service.run_as.user: must be an unprivileged user, not root (uid 0)' });
});
