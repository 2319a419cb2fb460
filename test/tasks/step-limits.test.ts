import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FIRST_STEPS_KEPT, MAX_STEP_NAME, MAX_STEPS } from '../../core/task-record/step-limits.js';
import type { TestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';
import { makeWorkspace, startTaskService, statusOf, submitOk, waitTask, writeFixturePlugin, type Status } from './task-helpers.js';

const LONG = 1000;

const TASKS = `
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';

export default [
  defineTask({
    name: 'long-steps',
    taskType: 'fixture',
    description: 'Runs the given number of empty steps with ${LONG}-character names (emoji: two units each).',
    input: { type: 'object', properties: { steps: { type: 'integer' } }, required: ['steps'] },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      for (let i = 0; i < input.steps; i++) await ctx.step('step-' + i + '-' + '\\u{1F600}'.repeat(${LONG / 2}), () => {});
      return {};
    },
  }),
  defineTask({
    name: 'hostile-events',
    taskType: 'fixture',
    description: 'Appends an overlong line and many progress lines to its events.jsonl itself, says ready, waits for a file named go.',
    input: { type: 'object', properties: { lines: { type: 'integer' } }, required: ['lines'] },
    output: { type: 'object', properties: {} },
    async run(input) {
      appendFileSync('events.jsonl', 'x'.repeat(300 * 1024) + '\\n');
      let lines = '';
      for (let i = 0; i < input.lines; i++) lines += JSON.stringify({ kind: 'progress', name: 'line-' + i + '-' + 'n'.repeat(${LONG}), started_at: null, finished_at: null, percentage: null }) + '\\n';
      appendFileSync('events.jsonl', lines);
      process.stdout.write('ready\\n');
      for (let i = 0; i < 3000 && !existsSync('go'); i++) await delay(20);
      return {};
    },
  }),
];
`;

type Step = Status['steps'][number];

function checkSteps(t: Test, steps: Step[], total: number, prefix: string): void {
  t.equal(steps.length, MAX_STEPS, `the status keeps ${MAX_STEPS} of ${total} steps`);
  const numbers = steps.map((s) => Number(new RegExp(`^${prefix}-(\\d+)-`).exec(s.name)?.[1]));
  const expected = [...Array.from({ length: FIRST_STEPS_KEPT }, (_, i) => i), ...Array.from({ length: MAX_STEPS - FIRST_STEPS_KEPT }, (_, i) => total - (MAX_STEPS - FIRST_STEPS_KEPT) + i)];
  t.same(numbers, expected, `the first ${FIRST_STEPS_KEPT} and the latest others, in order`);
  t.ok(steps.every((s) => s.name.length <= MAX_STEP_NAME && s.name.length >= MAX_STEP_NAME - 1), `names cut to ${MAX_STEP_NAME} characters`);
  t.ok(steps.every((s) => s.name === Buffer.from(s.name).toString()), 'never inside a surrogate pair');
}

/** A `stream_task` follower over SSE: the progress names and log text it got so far. */
function follow(svc: TestService, taskId: string) {
  const got = { names: [] as string[], log: '', ended: false };
  const controller = new AbortController();
  const reading = (async () => {
    const res = await svc.fetch('/jobs/stream_task/events', { method: 'POST', signal: controller.signal, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: taskId } }) });
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) !== -1) {
        const event = JSON.parse(text.slice(text.indexOf('data: ') + 6, end)) as { kind: string; name?: string; content?: string };
        text = text.slice(end + 2);
        if (event.kind === 'progress') got.names.push(event.name!);
        if (event.kind === 'log') got.log += event.content;
      }
    }
    got.ended = true;
  })().catch((err: Error) => {
    if (err.name !== 'AbortError') throw err;
  });
  return { got, reading, stop: () => controller.abort() };
}

t.test('a Task with 10,000 steps of 1,000-character names keeps a small record', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-step-limits', tasks: TASKS });
  const svc = await startTaskService(t, { workspace });
  const total = 10_000;
  const handle = await submitOk(t, svc, { task: 'long-steps', steps: total });
  const done = await waitTask(svc, handle);
  t.equal(done.status.state, 'succeeded');
  checkSteps(t, done.status.steps, total, 'step');
  const dir = join(workspace, 'fixture', handle.task_id);
  const statusBytes = (await stat(join(dir, 'status.json'))).size;
  t.ok(statusBytes < 1024 * 1024, `status.json is ${statusBytes} bytes`);
  const lines = (await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n');
  const ms = Date.parse(done.status.finished_at!) - Date.parse(done.status.started_at!);
  // At most 10 lines per 20 ms append, and the final one.
  t.ok(lines.length <= 10 * (Math.ceil(ms / 20) + 2), `${lines.length} progress lines in ${ms} ms (a line per change was ${2 * total})`);
  t.match(JSON.parse(lines.at(-1)!), { name: /^step-9999-/, finished_at: /./ }, 'the last change is never lost');
  const follower = follow(svc, handle.task_id);
  await follower.reading;
  t.equal(follower.got.names.length, MAX_STEPS, 'a follower of the finished Task gets the kept steps');
});

t.test('a status.json written by hand with huge steps is read within the limits', async (t) => {
  const workspace = await makeWorkspace(t);
  const id = 'hand#demo#huge-steps';
  const dir = join(workspace, 'hand', id);
  await mkdir(dir, { recursive: true });
  const total = 5000;
  const steps = Array.from({ length: total }, (_, i) => ({ name: `hand-${i}-${'h'.repeat(5000)}`, started_at: null, finished_at: null, percentage: null }));
  const status = { task_id: id, run_id: 'run-1', task_type: 'hand', task_name: 'demo', config: {}, state: 'succeeded', pid: null, created_at: null, started_at: null, finished_at: null, steps, result: {}, error: '', exit_code: 0, log_path: '' };
  await writeFile(join(dir, 'status.json.tmp'), JSON.stringify(status));
  await rename(join(dir, 'status.json.tmp'), join(dir, 'status.json'));
  const svc = await startTaskService(t, { workspace });
  checkSteps(t, (await statusOf(svc, id)).steps, total, 'hand');
  const listed = (await svc.call('list_task_statuses')).body.answer;
  checkSteps(t, listed.find((s) => s.task_id === id)!.steps, total, 'hand');
});

t.test('a live Task that writes its own events.jsonl: long lines skipped, names cut, late followers get the latest', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-step-limits', tasks: TASKS });
  const svc = await startTaskService(t, { workspace });
  const lines = 5000;
  const handle = await submitOk(t, svc, { task: 'hostile-events', lines });
  // The first follower joins at once: it gets the lines as the service reads them, a window at a time.
  const first = follow(svc, handle.task_id);
  await waitFor(() => first.got.names.at(-1)?.startsWith(`line-${lines - 1}-`) && first.got.log.includes('ready'), 30_000, 'the first follower to get the last line');
  const numbers = first.got.names.map((n) => Number(/^line-(\d+)-/.exec(n)?.[1]));
  t.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), `the overlong line is skipped, the others arrive in order (${numbers.length} of ${lines})`);
  t.ok(first.got.names.every((n) => n.length === MAX_STEP_NAME), `names cut to ${MAX_STEP_NAME} characters`);
  // The second joins once all are read: it gets the latest the service keeps, not all 5,000.
  const late = follow(svc, handle.task_id);
  await waitFor(() => late.got.log.includes('ready'), 30_000, 'the late follower to get the log');
  t.ok(late.got.names.length >= MAX_STEPS && late.got.names.length < 2 * MAX_STEPS, `a late follower got ${late.got.names.length} progress events`);
  t.match(late.got.names.at(-1), new RegExp(`^line-${lines - 1}-`), 'up to the latest');
  first.stop();
  late.stop();
  await writeFile(join(workspace, 'fixture', handle.task_id, 'go'), '');
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
});
