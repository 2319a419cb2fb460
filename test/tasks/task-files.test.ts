import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, constants, openSync, readSync, symlinkSync, writeSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { openAppendFileSync, openRegularFile, openRegularFileSync, UnsafeFileError } from '../../workers/safe-file.js';
import { parseSse, waitFor, type TestService } from '../helpers/service.js';
import { makeWorkspace, startTaskService, statusOf, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

/** Bounds a call that used to hang: the test fails instead of waiting for good. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Makes a FIFO at `path`; the teardown opens it for writing once, so a reader that blocked on it
 * (the defect this file guards against) gets end-of-file and its thread comes back.
 */
function makeFifo(t: Test, path: string): void {
  execFileSync('mkfifo', [path]);
  t.teardown(() => {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading, nothing to release.
    }
  });
}

async function secretFile(t: Test): Promise<{ path: string; secret: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-secret-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const secret = `TOP-SECRET-${process.pid}-${Date.now()}`;
  await writeFile(join(dir, 'shadow'), `${secret}\n`);
  return { path: join(dir, 'shadow'), secret };
}

/** A finished demo Task and the path of its log. */
async function finishedTask(t: Test, svc: TestService): Promise<{ id: string; log: string }> {
  const handle = await submitOk(t, svc, { task: 'demo', x: 2, y: 3 });
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  return { id: handle.task_id, log: join(svc.workspace, 'base', handle.task_id, 'task.log') };
}

const refusal = (id: string, kind: string) => `PermissionError: task.log of ${id} is not a regular file (${kind}); it is not read`;

t.test('safe-file: regular files open, everything else is refused on the descriptor', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-safe-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const regular = join(dir, 'regular.txt');
  await writeFile(regular, 'hello\n');
  symlinkSync(regular, join(dir, 'link'));
  makeFifo(t, join(dir, 'fifo'));
  await mkdir(join(dir, 'directory'));

  const handle = await openRegularFile(regular);
  t.equal(await handle.readFile('utf8'), 'hello\n', 'async: a regular file is read');
  await handle.close();
  const fd = openRegularFileSync(regular);
  const buf = Buffer.alloc(16);
  t.equal(buf.subarray(0, readSync(fd, buf)).toString(), 'hello\n', 'sync: a regular file is read');
  closeSync(fd);

  await t.rejects(openRegularFile(join(dir, 'missing')), { code: 'ENOENT' }, 'missing: the usual errno error');
  t.throws(() => openRegularFileSync(join(dir, 'missing')), { code: 'ENOENT' });

  const cases: Array<[string, UnsafeFileError['reason'], string]> = [
    ['link', 'symlink', 'symbolic link'],
    ['fifo', 'not-regular', 'named pipe'],
    ['directory', 'not-regular', 'directory'],
  ];
  for (const [name, reason, kind] of cases) {
    const path = join(dir, name);
    // A blocking open of the FIFO would never settle: bound it.
    const err = await within(5000, `opening ${name}`, openRegularFile(path).then(() => null, (e: unknown) => e));
    t.ok(err instanceof UnsafeFileError, `async: ${name} is refused`);
    t.match(err, { path, reason, kind, message: `${path} is not a regular file (${kind})` });
    t.throws(() => openRegularFileSync(path), new UnsafeFileError(path, reason, kind), `sync: ${name} is refused`);
  }

  const appended = openAppendFileSync(join(dir, 'new.log'));
  writeSync(appended, 'one\n');
  closeSync(appended);
  const again = openAppendFileSync(join(dir, 'new.log'));
  writeSync(again, 'two\n');
  closeSync(again);
  t.equal(await readFile(join(dir, 'new.log'), 'utf8'), 'one\ntwo\n', 'append: created, then appended to');
  t.throws(() => openAppendFileSync(join(dir, 'link')), new UnsafeFileError(join(dir, 'link'), 'symlink', 'symbolic link'), 'append: a link is not followed');
  t.equal(await readFile(regular, 'utf8'), 'hello\n', 'and its target is untouched');
  t.throws(() => openAppendFileSync(join(dir, 'fifo')), new UnsafeFileError(join(dir, 'fifo'), 'not-regular', 'named pipe or socket'), 'append: a FIFO without a reader is refused, not waited on');
});

// One service for the tests of a finished Task's files: each runs and damages a Task of its own.
const shared = startTaskService(t);

t.test('read_task_log does not follow a task.log replaced by a symbolic link', async (t) => {
  const svc = await shared;
  const { id, log } = await finishedTask(t, svc);
  const { path, secret } = await secretFile(t);
  await unlink(log);
  symlinkSync(path, log);

  for (const offset of [-1, 0]) {
    const res = await svc.call('read_task_log', { task_id: id, offset });
    t.same([res.status, res.body.success, res.body.answer], [200, false, refusal(id, 'symbolic link')], `offset ${offset}: a business failure`);
    t.notOk(JSON.stringify(res.body).includes(secret), 'the secret is not answered');
  }
  const stream = await within(15_000, 'stream_task', svc.events('stream_task', { task_id: id }));
  t.notOk(stream.raw.includes(secret), 'nor streamed');
  t.same(stream.events.at(-1), { kind: 'result', success: false, answer: refusal(id, 'symbolic link'), metadata: {} });
});

t.test('a FIFO named task.log is refused at once and blocks nothing', async (t) => {
  const svc = await shared;
  const { id, log } = await finishedTask(t, svc);
  await unlink(log);
  makeFifo(t, log);

  // More reads than libuv has threads: a blocking open would hold all four, and every later file
  // operation of the service (listing, submitting) would wait behind them.
  const reads = Array.from({ length: 6 }, () => svc.call('read_task_log', { task_id: id }));
  const listing = svc.call('list_entries', { path: '' });
  const status = svc.call('status', { task_id: id });
  const submitted = svc.call('submit', { task: 'demo', x: 1, y: 1 });
  for (const res of await within(10_000, 'read_task_log on a FIFO', Promise.all(reads))) {
    t.same([res.status, res.body.success, res.body.answer], [200, false, refusal(id, 'named pipe')]);
  }
  const [list, state, handle] = await within(10_000, 'list_entries, status and submit', Promise.all([listing, status, submitted]));
  t.same([list.body.success, list.body.answer.entries.some((e) => e.name === 'base')], [true, true], 'list_entries answers');
  t.same([state.body.success, state.body.answer.state], [true, 'succeeded'], 'status answers');
  t.equal(handle.body.success, true, 'submit answers');
  const next = handle.body.answer;
  const done = await within(20_000, 'the next Task', waitTask(svc, { ...next, task: 'demo' }));
  t.equal(done.status.state, 'succeeded', 'and the submitted Task runs to its end');
});

t.test('a Unix socket named task.log is refused like a FIFO, without an absolute path', async (t) => {
  const svc = await shared;
  const { id, log } = await finishedTask(t, svc);
  await unlink(log);
  const server = createServer().listen(log);
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const res = await svc.call('read_task_log', { task_id: id });
  t.same([res.status, res.body.success, res.body.answer], [200, false, refusal(id, 'socket')]);
  t.notOk(JSON.stringify(res.body).includes(svc.workspace), 'no absolute path is answered');
});

t.test('stream_task over /events on a finished Task whose log is a FIFO ends with a failed result', async (t) => {
  const svc = await shared;
  const { id, log } = await finishedTask(t, svc);
  await unlink(log);
  makeFifo(t, log);
  const res = await svc.fetch('/jobs/stream_task/events', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { task_id: id } }),
    signal: AbortSignal.timeout(15_000),
  });
  t.equal(res.status, 200);
  const events = parseSse(await res.text());
  t.same(events.at(-1), { kind: 'result', success: false, answer: refusal(id, 'named pipe'), metadata: {} });
});

t.test('records that are FIFOs or symbolic links look missing and do not hold up the start', async (t) => {
  const workspace = await makeWorkspace(t);
  const { path: outside } = await secretFile(t);
  const fifoId = 'base#demo#fifo-record';
  const linkId = 'base#demo#linked-record';
  await mkdir(join(workspace, 'base', fifoId), { recursive: true });
  await mkdir(join(workspace, 'base', linkId), { recursive: true });
  makeFifo(t, join(workspace, 'base', fifoId, 'status.json'));
  // A valid record, but not written here: the link is not followed.
  const now = new Date().toISOString();
  await writeFile(outside, JSON.stringify({ task_id: linkId, run_id: 'r1', task_type: 'base', state: 'succeeded', created_at: now }));
  symlinkSync(outside, join(workspace, 'base', linkId, 'status.json'));

  const svc = await within(20_000, 'the service start', startTaskService(t, { workspace }));
  t.same((await within(10_000, 'list_task_ids', svc.call('list_task_ids'))).body.answer, [], 'neither record is listed');
  t.match((await svc.call('status', { task_id: fifoId })).body.answer, /^KeyError: /);
  t.match((await svc.call('status', { task_id: linkId })).body.answer, /^KeyError: /);
});

const PIPE_TASKS = `
import { execFileSync } from 'node:child_process';
import { unlinkSync, writeFileSync } from 'node:fs';
import { defineTask } from 'taskyard/task';

const empty = { type: 'object', properties: {} };

export default [
  defineTask({
    name: 'fifo-artifact',
    taskType: 'pipes',
    description: 'Registers a named pipe as an artifact.',
    input: empty,
    output: empty,
    async run(input, ctx) {
      execFileSync('mkfifo', ['pipe']);
      await ctx.artifact('pipe', 'pipe');
      return {};
    },
  }),
  defineTask({
    name: 'swapped-artifact',
    taskType: 'pipes',
    description: 'Replaces its artifact by a named pipe right after registering it.',
    input: empty,
    output: empty,
    async run(input, ctx) {
      writeFileSync('data.txt', 'original content\\n');
      // Runs once artifact() has checked the file and returned to wait, before any asynchronous
      // open it started could reach the file: the runtime must read what it checked.
      process.nextTick(() => {
        unlinkSync('data.txt');
        execFileSync('mkfifo', ['data.txt']);
      });
      await ctx.artifact('data', 'data.txt');
      return {};
    },
  }),
];
`;

/** Waits (bounded) for a terminal state: a runner blocked on a FIFO would never get there. */
const terminal = (svc: TestService, id: string) =>
  waitFor(async () => {
    const status = await statusOf(svc, id);
    return ['succeeded', 'failed', 'cancelled'].includes(status.state) ? status : null;
  }, 20_000, `${id} to end`);

t.test('artifacts: a FIFO is refused, and the file hashed is the file checked', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-pipes', tasks: PIPE_TASKS });
  const svc = await startTaskService(t, { workspace });

  const fifo = await submitOk(t, svc, { task: 'fifo-artifact' });
  const refused = await terminal(svc, fifo.task_id);
  t.same([refused.state, refused.error], ['failed', 'ValueError: artifact is not a regular file (named pipe): pipe'], 'a FIFO artifact fails the Task with ValueError');

  const swapped = await submitOk(t, svc, { task: 'swapped-artifact' });
  const done = await terminal(svc, swapped.task_id);
  t.equal(done.state, 'succeeded', done.error);
  const sha256 = createHash('sha256').update('original content\n').digest('hex');
  t.same((done['result'] as { artifacts: unknown }).artifacts, { data: { path: 'data.txt', size: 17, sha256 } }, 'size and hash of the file that was opened');
});

for (const pool of [0, 2]) {
  t.test(`a task.log planted as a link while the run is queued is not written through (runner pool ${pool})`, async (t) => {
    const svc = await startTaskService(t, { config: { service: { max_running_tasks: 1, runner_pool_size: pool } } });
    const { path: outside } = await secretFile(t);
    const before = await readFile(outside, 'utf8');
    const blocker = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
    const queued = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
    t.equal((await statusOf(svc, queued.task_id)).state, 'queued');
    const log = join(svc.workspace, 'base', queued.task_id, 'task.log');
    symlinkSync(outside, log);
    t.equal((await svc.call('cancel', { task_id: blocker.task_id })).body.answer, true);

    const ended = await terminal(svc, queued.task_id);
    t.equal(await readFile(outside, 'utf8'), before, 'nothing was appended outside the workspace');
    if (pool === 0) {
      // Started directly: the spawner opens task.log safely and refuses the link.
      t.same([ended.state, ended.error], ['failed', 'RuntimeError: the task runner could not start: task.log is not a regular file (symbolic link); it is not written']);
    } else {
      // A pooled runner moves its own log onto task.log: the link is replaced, not followed.
      t.equal(ended.state, 'succeeded', ended.error);
      t.ok((await lstat(log)).isFile(), 'task.log is the run\'s own file now');
    }
  });
}
