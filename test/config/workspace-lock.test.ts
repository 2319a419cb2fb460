import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { validateConfig } from '../../supervisor/common/config.js';
import { startService, type RunningService } from '../../app/service.js';
import { lockWorkspace, takeoverTicket, WorkspaceInUseError, type LockHolder } from '../../supervisor/common/workspace-lock.js';
import { readProcess } from '../../workers/process-tree.js';
import { waitFor } from '../helpers/service.js';
import { leanServeConfig, serveCli, type Serving } from '../helpers/serve-cli.js';


async function makeWorkspace(t: Test): Promise<string> {
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'taskyard-lock-')));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  return workspace;
}

const lockFile = (workspace: string) => join(workspace, '.taskyard', 'service.lock');
const readHolder = async (workspace: string) => JSON.parse(await readFile(lockFile(workspace), 'utf8')) as LockHolder;

/** A service in process; no Task runs here, so no runner is started ahead of need and no GPU probed. */
function start(workspace: string): Promise<RunningService> {
  return startService({ config: validateConfig({ service: { workspace, port: 0, host: '127.0.0.1', runner_pool_size: 0, gpus: 0 } }, 'test'), token: 'lock-token' });
}

/** Writes a lock as a service that is gone would have left it. */
async function writeLock(workspace: string, holder: LockHolder): Promise<void> {
  await mkdir(join(workspace, '.taskyard'), { recursive: true });
  await writeFile(lockFile(workspace), JSON.stringify(holder));
}

/** A pid that belonged to a process which has ended (and was reaped). */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  if (!pid) throw new Error('could not start a short-lived process');
  return pid;
}

const inUse = (workspace: string, pid: number, address: string) =>
  `the workspace ${workspace} is in use by another taskyard service (pid ${pid}, ${address}); stop it first or choose another --workspace`;

t.test('a second service on the same workspace is refused; the first keeps working and releases on close', async (t) => {
  const workspace = await makeWorkspace(t);
  const first = await start(workspace);
  let open = true;
  t.teardown(() => (open ? first.close() : undefined));
  const holder = await readHolder(workspace);
  t.same([holder.pid, holder.address, holder.start_time], [process.pid, first.url, (await readProcess(process.pid))!.startTime], 'the lock names pid, start time and address');

  const second = start(workspace);
  await t.rejects(second, new WorkspaceInUseError(workspace, holder));
  await second.catch((err: Error) => t.equal(err.message, inUse(workspace, process.pid, first.url)));
  const res = await fetch(`${first.url}/jobs/list_entries`, { method: 'POST', headers: { authorization: 'Bearer lock-token', 'content-type': 'application/json' }, body: '{}' });
  t.match(await res.json(), { success: true }, 'the first service still answers');
  t.same(await readHolder(workspace), holder, 'and still holds the lock');

  open = false;
  await first.close();
  await t.rejects(readFile(lockFile(workspace)), { code: 'ENOENT' }, 'closing releases the lock');
  const third = await start(workspace);
  t.teardown(() => third.close());
  t.equal((await readHolder(workspace)).address, third.url, 'the workspace can be served again');
});

t.test('a lock left by a dead process, or by a pid now used by another process, is taken over', async (t) => {
  const workspace = await makeWorkspace(t);
  const now = new Date().toISOString();
  const stale: LockHolder[] = [
    { pid: deadPid(), start_time: '1', address: 'http://127.0.0.1:1', started_at: now },
    // This very pid is alive, but it started at another time: the pid was reused.
    { pid: process.pid, start_time: '1', address: 'http://127.0.0.1:2', started_at: now },
  ];
  for (const holder of stale) {
    await writeLock(workspace, holder);
    const service = await start(workspace);
    t.same([(await readHolder(workspace)).pid, (await readHolder(workspace)).address], [process.pid, service.url], `pid ${holder.pid} start ${holder.start_time}: taken over`);
    await service.close();
  }
  // Damaged locks have no live holder: garbage, a link (not followed), a FIFO (not waited on).
  for (const plant of [
    () => writeFile(lockFile(workspace), '{"pid": 1, "half'),
    () => symlink(lockFile(workspace) + '.elsewhere', lockFile(workspace)),
    () => void execFileSync('mkfifo', [lockFile(workspace)]),
  ]) {
    await plant();
    const service = await start(workspace);
    t.equal((await readHolder(workspace)).address, service.url, 'a damaged lock is replaced');
    await service.close();
  }
  await writeLock(workspace, { pid: process.pid, start_time: (await readProcess(process.pid))!.startTime, address: null, started_at: now });
  await t.rejects(start(workspace), { name: 'WorkspaceInUseError', message: /\(pid \d+, address not known yet: it is still starting\)/ }, 'a live holder that is still starting is respected');
});

t.test('starters racing for a stale lock: exactly one wins', async (t) => {
  const workspace = await makeWorkspace(t);
  for (let round = 0; round < 5; round++) {
    await writeLock(workspace, { pid: deadPid(), start_time: '1', address: null, started_at: new Date().toISOString() });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockWorkspace(workspace)));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.equal(won.length, 1, `round ${round}: one lock`);
    t.ok(lost.every((r) => r.reason instanceof WorkspaceInUseError), 'the others are told the workspace is in use');
    await won[0]!.value.release();
    t.same((await readdir(join(workspace, '.taskyard'))).filter((n) => n.startsWith('service.lock') || n.endsWith('.tmp')), [], 'no lock, ticket or temporary file left');
  }
});

t.test('a take-over ticket held by a live starter keeps others off the stale lock; a dead one does not', async (t) => {
  const workspace = await makeWorkspace(t);
  const dir = join(workspace, '.taskyard');
  const stale: LockHolder = { pid: deadPid(), start_time: '1', address: null, started_at: new Date().toISOString() };
  const me = { pid: process.pid, start_time: (await readProcess(process.pid))!.startTime, address: null };

  await writeLock(workspace, stale);
  const staleText = await readFile(lockFile(workspace), 'utf8');
  await writeFile(takeoverTicket(dir, staleText, 1), JSON.stringify({ ...stale, started_at: 'dead taker' }));
  await writeFile(takeoverTicket(dir, staleText, 2), JSON.stringify({ ...me, started_at: 'live taker' }));
  // The taker holding ticket 2 is alive (it is this process): the stale lock is its to remove,
  // so a starter waits for it and, as it never finishes here, gives up.
  await t.rejects(lockWorkspace(workspace), { message: /another taskyard service keeps starting on it/ });
  t.equal(await readFile(lockFile(workspace), 'utf8'), staleText, 'the lock being taken over was left alone');
  await rm(takeoverTicket(dir, staleText, 2));

  await writeLock(workspace, stale);
  await writeFile(takeoverTicket(dir, staleText, 1), JSON.stringify({ ...stale, started_at: 'dead taker' }));
  const lock = await lockWorkspace(workspace);
  t.equal((await readHolder(workspace)).pid, process.pid, 'a ticket whose holder died is passed over');
  t.same((await readdir(dir)).filter((n) => n.includes('takeover')), [], 'and cleared');
  await lock.release();
});

/** `taskyard serve` on `workspace`, as its own process (with `config`, a lean one). */
function serve(t: Test, workspace: string, config: string): Serving {
  return serveCli(t, ['--workspace', workspace, '--token', 'lock-token', '--config', config]);
}

const bounded = <T>(p: Promise<T>, what: string) => waitFor(() => Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), 100))]), 30_000, what);

t.test('the CLI: a second `serve` on the workspace exits 2 naming the running one', async (t) => {
  const workspace = await makeWorkspace(t);
  const config = await leanServeConfig(t);
  const first = serve(t, workspace, config);
  const up = await bounded(first.outcome, 'the first service');
  if (!('url' in up)) {
    t.fail(`the first service did not start: ${first.output()}`);
    return;
  }
  const second = serve(t, workspace, config);
  t.same(await bounded(second.outcome, 'the second start to end'), { code: 2 });
  t.equal(second.output().trim(), `taskyard serve: ${inUse(workspace, first.child.pid!, up.url)}`);
  t.equal((await fetch(`${up.url}/health`, { headers: { authorization: 'Bearer lock-token' } })).status, 200, 'the first one still serves');
});

t.test('the CLI: three `serve` started at once on a stale lock, one serves', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeLock(workspace, { pid: deadPid(), start_time: '1', address: 'http://127.0.0.1:1', started_at: new Date().toISOString() });
  const config = await leanServeConfig(t);
  const starters = [serve(t, workspace, config), serve(t, workspace, config), serve(t, workspace, config)];
  const outcomes = await Promise.all(starters.map((s, i) => bounded(s.outcome, `starter ${i}`)));
  const serving = outcomes.flatMap((o, i) => ('url' in o ? [starters[i]!] : []));
  t.equal(serving.length, 1, `one serves: ${starters.map((s) => s.output()).join(' | ')}`);
  t.same(outcomes.filter((o) => !('url' in o)), [{ code: 2 }, { code: 2 }], 'the others exit 2');
  t.equal((await readHolder(workspace)).pid, serving[0]!.child.pid, 'the lock names the one serving');
});
