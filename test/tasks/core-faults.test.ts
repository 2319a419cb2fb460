import t, { type Test } from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { closeSync, lstatSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomicSync } from '../../core/task-record/record-files.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { waitFor } from '../helpers/service.js';
import { tmpfsUnavailable } from '../helpers/tmpfs.js';
import { killTaskProcesses, makeWorkspace, startTaskService, statusOf, submitOk, waitState, waitTask, writeFixturePlugin, type Handle, type Status } from './task-helpers.js';

/** A small tmpfs mounted for one test (root only); answers its path, or null with the reason printed. */
async function smallDisk(t: Test, size: string): Promise<string | null> {
  if (process.getuid?.() !== 0) {
    t.comment('skipped: mounting a tmpfs needs root');
    return null;
  }
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    t.comment(`skipped: mount -t tmpfs failed here: ${(err as Error).message}`);
    return null;
  }
  t.teardown(async () => {
    await killTaskProcesses(dir).catch(() => undefined);
    execFileSync('umount', ['-l', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system of `dir` to the last byte with `filler`; answers its path. */
function fill(dir: string): string {
  const filler = join(dir, 'filler.bin');
  const fd = openSync(filler, 'a');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = block.length; size >= 1; ) {
      try {
        writeSync(fd, block, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

t.test('a full disk during a run: a clear failed record, the service lives, the record lands once space is back', { skip: tmpfsUnavailable() }, async (t) => {
  const disk = await smallDisk(t, '4m');
  if (!disk) return;
  const svc = await startTaskService(t, { workspace: disk });
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 1, steps: 4, task_name: 'full' });
  await waitState(svc, handle.task_id, 'running');
  const filler = fill(disk);
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'failed', 'the run ends failed, not running until a restart');
  t.match(done.status.error, /^RuntimeError: the task runner exited with code \d+ without a terminal status/);
  t.equal((await svc.call('version')).status, 200, 'the service still answers');
  const onDisk = () => readFile(join(disk, 'base', handle.task_id, 'status.json'), 'utf8').then((text) => (JSON.parse(text) as Status).state, () => 'unreadable');
  t.not(await onDisk(), 'failed', 'the record could not be written yet');
  await rm(filler);
  await waitFor(async () => (await onDisk()) === 'failed', 10_000, 'the failed record to be written once space is back');
  t.pass('the failed record is on disk now, as the service answered');
  t.same((await svc.call('delete_tasks', { task_ids: [handle.task_id] })).body.answer, [handle.task_id], 'and it can be deleted');
});

t.test('a submit on a full disk leaves nothing and keeps the finished Task it would replace', { skip: tmpfsUnavailable() }, async (t) => {
  const disk = await smallDisk(t, '4m');
  if (!disk) return;
  const svc = await startTaskService(t, { workspace: disk });
  const first = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, task_name: 'keep' });
  t.equal((await waitTask(svc, first)).status.state, 'succeeded');
  const dir = join(disk, 'base', first.task_id);
  const metadata = await readFile(join(dir, 'metadata.json'), 'utf8');
  const filler = fill(disk);
  for (const args of [{ task: 'demo', x: 3, y: 4, task_name: 'keep' }, { task: 'demo', x: 3, y: 4 }]) {
    const refused = await svc.call('submit', args);
    t.equal(refused.body.success, false, 'the submit fails');
    t.match(refused.body.answer, /^OSError: the Task could not be created: .*ENOSPC.*; nothing was written/);
  }
  t.equal(await readFile(join(dir, 'metadata.json'), 'utf8'), metadata, 'the old metadata.json is intact');
  t.equal((await statusOf(svc, first.task_id)).run_id, first.run_id, 'the old record stands');
  t.same(await readdir(join(disk, 'base')), [first.task_id], 'no hidden or hollow directory is left');
  await rm(filler);
  const second = await submitOk(t, svc, { task: 'demo', x: 3, y: 4, task_name: 'keep' });
  t.equal((await waitTask(svc, second)).status.state, 'succeeded', 'with space back, the name is replaced');
});

t.test('records are written whole or not at all on a nearly full disk', { skip: tmpfsUnavailable() }, async (t) => {
  const disk = await smallDisk(t, '1m');
  if (!disk) return;
  const file = join(disk, 'status.json');
  writeJsonAtomicSync(file, { state: 'old' });
  const filler = fill(disk);
  t.throws(() => writeJsonAtomicSync(file, { state: 'new', padding: 'x'.repeat(200_000) }), /ENOSPC/, 'the write fails');
  t.same(JSON.parse(await readFile(file, 'utf8')), { state: 'old' }, 'the old record stays whole');
  t.same((await readdir(disk)).sort(), ['filler.bin', 'status.json'], 'no temp file is left');
  await rm(filler);
});

t.test('a directory created and removed in the workspace root at least 400 times while Tasks run', async (t) => {
  // On disk, as before: on a tmpfs the churn below runs many times faster, and the service, in this
  // process, fell behind the flood of change events (a demo run not seen ending within 300 s).
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-churn-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const svc = await startTaskService(t, { workspace });
  // One process creating and removing the directory as fast as it can (no process per cycle),
  // until told to stop after the Tasks below ran, and at least 400 times.
  const churn = spawn('/usr/bin/python3', ['-c', [
    'import os, select, sys',
    'n = 0',
    'while n < 400 or not select.select([sys.stdin], [], [], 0)[0]:',
    '    os.mkdir("outputs"); os.rmdir("outputs"); n += 1',
    'print(n)',
  ].join('\n')], { cwd: svc.workspace, stdio: ['pipe', 'pipe', 'inherit'] });
  let cycles = '';
  churn.stdout.on('data', (d: Buffer) => (cycles += d.toString()));
  const TASKS = 4;
  for (let runs = 0; runs < TASKS; runs++) {
    const handle = await submitOk(t, svc, { task: 'demo', x: runs, y: 1 });
    t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  }
  t.equal(churn.exitCode, null, 'the directory still came and went while the last Task ended');
  churn.stdin.end('stop');
  await exited(churn);
  t.ok(Number(cycles) >= 400, `the directory came and went ${cycles.trim()} times while ${TASKS} Tasks ran`);
  t.equal((await svc.call('version')).status, 200, 'the service lives');
});

t.test('a Task that swaps its events.jsonl for a directory, also across a restart', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  const first = await startTaskService(t, { workspace });
  // It runs until told to finish, so a slow restart cannot outlast it.
  const handle = await submitOk(t, first, { task: 'hostile-files', seconds: 120, until_file: 'finish' });
  const running = await waitState(first, handle.task_id, 'running');
  const eventsPath = join(workspace, 'fixture', handle.task_id, 'events.jsonl');
  await waitFor(() => lstatSync(eventsPath, { throwIfNoEntry: false })?.isDirectory(), 5000, 'the Task to swap events.jsonl for a directory');
  t.equal((await first.call('status', { task_id: handle.task_id })).status, 200, 'the service lives');
  await first.close();
  const second = await startTaskService(t, { workspace });
  t.same([(await statusOf(second, handle.task_id)).state, (await statusOf(second, handle.task_id)).pid], ['running', running.pid], 'adopted after the restart');
  await writeFile(join(workspace, 'fixture', handle.task_id, 'finish'), '');
  const done = await waitTask(second, handle);
  t.equal(done.status.state, 'succeeded', 'the Task ends as it should');
  t.ok((done.status['steps'] as unknown[]).length > 0, 'its steps are in the status');
});

t.test('start-up removes a new run directory whose record never reached the disk, and nothing else', async (t) => {
  const workspace = await makeWorkspace(t);
  const base = join(workspace, 'base');
  // A machine that stopped between the rename of a new run's directory and the flush of its
  // record leaves both files empty; the submit was never answered.
  const unflushed = 'base#demo#unflushed';
  await mkdir(join(base, unflushed), { recursive: true });
  await writeFile(join(base, unflushed, 'status.json'), '');
  await writeFile(join(base, unflushed, 'events.jsonl'), '');
  // An empty status next to a log is a run that started: not the submit's leftover.
  const started = 'base#demo#started';
  await mkdir(join(base, started));
  await writeFile(join(base, started, 'status.json'), '');
  await writeFile(join(base, started, 'task.log'), 'hello\n');
  const svc = await startTaskService(t, { workspace });
  const done = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
  t.equal((await waitTask(svc, done)).status.state, 'succeeded');
  t.same((await readdir(base)).sort(), [done.task_id, started].sort(), 'only the unflushed directory is removed');
});

t.test('kill -9 during a burst of submits: after a restart nothing is left over, and every acknowledged submit ran or says why not', async (t) => {
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const first = await startServiceProcess(t, workspace);
  const acknowledged: Handle[] = [];
  // Eight clients submit without pause; the 16th acknowledgment kills the service at once, while
  // the other clients' submits are still in flight.
  const clients = Array.from({ length: 8 }, async () => {
    while (!first.child.killed) {
      try {
        const res = await first.call('submit', { task: 'demo', x: 1, y: 2 });
        if (res.success) acknowledged.push(res.answer);
        if (acknowledged.length === 16) first.child.kill('SIGKILL');
      } catch {
        return; // the service is gone
      }
    }
  });
  await waitFor(() => acknowledged.length >= 16, 20_000, '16 acknowledged submits');
  await exited(first.child);
  await Promise.all(clients);
  const second = await startServiceProcess(t, workspace);
  const names = await readdir(join(workspace, 'base'));
  t.same(names.filter((n) => n.startsWith('.')), [], 'no hidden run directories are left');
  for (const name of names) {
    const files = await readdir(join(workspace, 'base', name));
    if (!files.includes('status.json') && !files.includes('metadata.json')) t.fail(`${name} holds no record: ${files.join(', ')}`);
  }
  for (const handle of acknowledged) {
    const waited = await second.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
    const status = waited.answer;
    if (status.state !== 'succeeded' && !/^RuntimeError: worker lost/.test(status.error)) t.fail(`${handle.task_id}: ${JSON.stringify(status)}`);
  }
  t.pass(`${acknowledged.length} acknowledged submits each ran or were marked lost with a reason`);
  second.child.kill('SIGTERM');
  await exited(second.child);
});
