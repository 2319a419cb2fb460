import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { TaskStatus } from '../../schemas/tasks.js';
import { createRunDir } from '../../supervisor/tasks/records/run-dir.js';
import { SpareRunDirs } from '../../supervisor/tasks/records/spare-run-dirs.js';
import { waitFor } from '../helpers/wait-for.js';
import { makeWorkspace, startTaskService, submitOk, waitTask } from './task-helpers.js';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';

/** A queued record of a demo run named `name`. */
function queued(name: string): TaskStatus {
  const taskId = `base#demo#${name}`;
  return {
    task_id: taskId, run_id: name.padStart(32, '0'), task_type: 'base', task_name: 'demo',
    config: { x: 1, y: 2, task_name: name, source_tasks: '' },
    state: 'queued', pid: null, created_at: new Date().toISOString(), started_at: null, finished_at: null,
    steps: [], result: {}, error: '', exit_code: 0, log_path: `base/${taskId}/task.log`,
  };
}

/** How many spares in `dir` hold both of their files (one is made whole before it is used). */
async function spareCount(dir: string): Promise<number> {
  const names = await readdir(dir);
  const whole = await Promise.all(names.map(async (name) => (await readdir(join(dir, name)).catch(() => [])).length === 2));
  return whole.filter(Boolean).length;
}

/** Two spares made in a fresh workspace; answers the workspace, the spares and their directory. */
async function withSpares(t: Test): Promise<{ workspace: string; spares: SpareRunDirs; spareDir: string }> {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-spares-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const spareDir = join(workspace, '.taskyard', 'spare-runs');
  const spares = new SpareRunDirs(spareDir, 2);
  t.teardown(() => spares.close());
  await spares.start();
  await waitFor(() => spares.ready === 2, 5000, 'two spares ready');
  return { workspace, spares, spareDir };
}

const inode = async (path: string) => (await stat(path)).ino;

t.test('a new run takes a spare directory whole: the spare becomes the run, with its record and an empty events.jsonl', async (t) => {
  const { workspace, spares, spareDir } = await withSpares(t);
  const before = new Map(await Promise.all((await readdir(spareDir)).map(async (name) => [await inode(join(spareDir, name)), name] as const)));
  const status = queued('one');
  const dir = join(workspace, 'base', status.task_id);
  await createRunDir(dir, status, spares).durable;
  t.ok(before.has(await inode(dir)), 'the run directory is one of the spares, renamed into place');
  t.same(JSON.parse(await readFile(join(dir, 'status.json'), 'utf8')), status, 'its record is the queued status');
  t.equal(await readFile(join(dir, 'events.jsonl'), 'utf8'), '', 'and its progress record is there, empty');
  t.same((await readdir(dir)).sort(), ['events.jsonl', 'status.json'], 'nothing else');
  t.same(await readdir(join(workspace, 'base')), [status.task_id], 'no hidden staging directory is left');
});

t.test('a spare a Task tampered with is dropped: nothing outside is written, the run directory is made fresh', async (t) => {
  const { workspace, spares, spareDir } = await withSpares(t);
  const outside = join(workspace, 'outside.txt');
  await writeFile(outside, 'untouched');
  // Every spare replaced: a link as status.json, a link as the whole directory, a FIFO-free non-empty record.
  const names = await readdir(spareDir);
  for (const [i, name] of names.entries()) {
    const path = join(spareDir, name);
    await rm(path, { recursive: true, force: true });
    if (i % 3 === 0) {
      await mkdir(path);
      await symlink(outside, join(path, 'status.json'));
      await writeFile(join(path, 'events.jsonl'), '');
    } else if (i % 3 === 1) {
      await mkdir(join(workspace, 'elsewhere'), { recursive: true });
      await symlink(join(workspace, 'elsewhere'), path);
    } else {
      await mkdir(path);
      await writeFile(join(path, 'status.json'), '{"planted":true}');
      await writeFile(join(path, 'events.jsonl'), '');
    }
  }
  const status = queued('two');
  const dir = join(workspace, 'base', status.task_id);
  await createRunDir(dir, status, spares).durable;
  t.equal(await readFile(outside, 'utf8'), 'untouched', 'the linked file is not written');
  t.same(await readdir(join(workspace, 'elsewhere')), [], 'nothing is written through a linked spare');
  t.ok((await stat(dir)).isDirectory(), 'the run directory is a real directory');
  t.same(JSON.parse(await readFile(join(dir, 'status.json'), 'utf8')), status, 'holding the queued status');
  t.equal(await readFile(join(dir, 'events.jsonl'), 'utf8'), '', 'and an empty events.jsonl');
});

t.test('through the service: submits use spares, spares are made again, and a restart clears what the last service left', async (t) => {
  const workspace = await makeWorkspace(t);
  const spareDir = join(workspace, '.taskyard', 'spare-runs');
  await mkdir(join(spareDir, 'left-by-a-dead-service'), { recursive: true });
  const svc = await startTaskService(t, { workspace });
  await waitFor(async () => (await spareCount(spareDir)) === 2 && !(await readdir(spareDir)).includes('left-by-a-dead-service'), 5000, 'two fresh spares, the old one removed');
  for (let i = 0; i < 3; i++) {
    const spare = new Set(await Promise.all((await readdir(spareDir)).map((name) => inode(join(spareDir, name)))));
    const handle = await submitOk(t, svc, { task: 'demo', x: i, y: 2 });
    t.ok(spare.has(await inode(join(workspace, 'base', handle.task_id))), `submit ${i}: its directory was a spare`);
    t.equal((await waitTask(svc, handle)).status.state, 'succeeded', `submit ${i}: the Task succeeds`);
    await waitFor(async () => (await spareCount(spareDir)) === 2 && (await readdir(spareDir)).length === 2, 5000, 'the spares made again');
  }
});
