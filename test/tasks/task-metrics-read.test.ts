import t, { type Test } from 'tap';
import { parseSse, TEST_TOKEN, waitFor } from '../helpers/service.js';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMcp } from '../helpers/mcp-client.js';
import type { TestService } from '../helpers/service.js';
import type { TaskMetricsChunk } from '../../schemas/task-metrics.js';
import { readMetricsWindow } from '../../supervisor/tasks/follow/metrics-reader.js';
import { startTaskService, submitOk, waitTask, type Handle } from './task-helpers.js';

/** A Python script reporting metrics through the stdlib helper the runner puts on PYTHONPATH. */
const TRAIN = [
  'import taskyard_task as tt',
  'for epoch in range(5):',
  '    tt.metric("loss", 1 / (epoch + 1), step=epoch)',
  '    tt.metric("accuracy", epoch / 10)',
  'tt.metric("diverged", float("nan"))',
].join('\n');

// One service for every test: each reads the metrics of Tasks of its own.
const shared = startTaskService(t);

const metricsFile = (svc: TestService, handle: Handle) => join(svc.workspace, 'command', handle.task_id, 'metrics.jsonl');

async function read(svc: TestService, taskId: string, args: Record<string, unknown> = {}): Promise<TaskMetricsChunk> {
  const res = await svc.call('read_task_metrics', { task_id: taskId, ...args });
  if (!res.body.success) throw new Error(`read_task_metrics failed: ${JSON.stringify(res.body.answer)}`);
  return res.body.answer;
}

/** Every point of every series, read page by page from cursor 0. */
async function readAll(svc: TestService, taskId: string, args: Record<string, unknown>, onPage: (page: TaskMetricsChunk, from: number) => void = () => undefined) {
  const all: Record<string, unknown[]> = {};
  let cursor = 0;
  for (;;) {
    const page = await read(svc, taskId, { ...args, cursor });
    onPage(page, cursor);
    for (const [name, points] of Object.entries(page.series)) (all[name] ??= []).push(...points);
    cursor = page.cursor;
    if (!page.has_more) return { all, cursor };
  }
}

async function pythonTask(t: Test, svc: TestService): Promise<Handle> {
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', '-c', TRAIN] });
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded', 'the Python Task succeeds');
  return handle;
}

t.test('read_task_metrics answers the series a Python command Task reported, over HTTP, SSE and MCP', async (t) => {
  const svc = await shared;
  const handle = await pythonTask(t, svc);

  const first = await read(svc, handle.task_id);
  t.same(Object.keys(first.series).sort(), ['accuracy', 'diverged', 'loss'], 'every series by name');
  t.same(first.series['loss']!.map((p) => [p.value, p.step]), [0, 1, 2, 3, 4].map((i) => [1 / (i + 1), i]), 'loss with its steps, in order');
  t.same(first.series['accuracy']!.map((p) => p.value), [0, 0.1, 0.2, 0.3, 0.4]);
  t.notOk('step' in first.series['accuracy']![0]!, 'a point without a step has none');
  t.same(first.series['diverged']!.map((p) => p.value), [null], 'a NaN arrives as null');
  t.ok(first.series['loss']!.every((p) => !Number.isNaN(Date.parse(p.timestamp))), 'each point has its timestamp');
  t.equal(first.has_more, false);
  t.equal(first.reset, false);

  // Over a real socket, and as an SSE call ending with its result.
  const http = await svc.fetch('/jobs/read_task_metrics', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: handle.task_id } }) });
  t.same(((await http.json()) as { answer: TaskMetricsChunk }).answer, first, 'HTTP answers the same');
  const sse = await svc.events('read_task_metrics', { task_id: handle.task_id, cursor: 0 });
  t.same(sse.result?.answer, first, 'SSE ends with the same result');
  const followed = await svc.events('read_task_metrics', { task_id: handle.task_id, cursor: 0, follow: true });
  t.same(followed.events.filter((e) => e['kind'] === 'metrics').map(({ kind: _, ...chunk }) => chunk), [first], 'followed, the points of an ended Task come as one metrics event');
  t.same(followed.result?.answer, { series: {}, cursor: first.cursor, has_more: false, reset: false }, 'and the result carries the cursor to read on from');

  const mcp = await connectMcp(t, svc.url, svc.token);
  t.ok((await mcp.listTools()).tools.some((tool) => tool.name === 'read_task_metrics'), 'an MCP tool');
  const viaMcp = await mcp.callTool({ name: 'read_task_metrics', arguments: { task_id: handle.task_id } });
  t.equal(viaMcp.isError, false);
  t.same((viaMcp.structuredContent as { answer: unknown }).answer, first, 'MCP answers the same (valid against its outputSchema)');

  // Paging: max_points bounds each answer, the cursors chain, nothing is lost or repeated.
  const sizes: number[] = [];
  const paged = await readAll(svc, handle.task_id, { max_points: 3 }, (page) => sizes.push(Object.values(page.series).reduce((n, p) => n + p.length, 0)));
  t.same(paged.all, first.series, 'pages of 3 add up to the whole');
  t.same(sizes, [3, 3, 3, 2], 'three points a page, has_more until the last');
  t.equal(paged.cursor, first.cursor, 'the last cursor is the end of the file');
  const after = await read(svc, handle.task_id, { cursor: first.cursor });
  t.same(after, { series: {}, cursor: first.cursor, has_more: false, reset: false }, 'nothing new after the end');

  // A Task without metrics, an unknown Task, a bad argument.
  const demo = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
  await waitTask(svc, demo);
  t.same(await read(svc, demo.task_id), { series: {}, cursor: 0, has_more: false, reset: false }, 'no metrics: no series');
  const unknown = await svc.call('read_task_metrics', { task_id: 'command#command#nobody' });
  t.same([unknown.status, unknown.body.success, unknown.body.answer], [200, false, 'KeyError: Unknown task command#command#nobody']);
  t.equal((await svc.call('read_task_metrics', { task_id: handle.task_id, cursor: -1 })).status, 422, 'a negative cursor is refused');
});

/** Three epochs, then (bounded) a wait for `go` in its directory, then two more. */
const GATED = [
  'import os, time, taskyard_task as tt',
  'for epoch in range(3): tt.metric("loss", 1 / (epoch + 1), step=epoch)',
  'deadline = time.time() + 60',
  'while not os.path.exists("go") and time.time() < deadline: time.sleep(0.05)',
  'for epoch in range(3, 5): tt.metric("loss", 1 / (epoch + 1), step=epoch)',
].join('\n');

t.test('over /events with follow, read_task_metrics follows a running Task live, then ends once its last point was sent', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', '-c', GATED] });
  const res = await fetch(`${svc.url}/jobs/read_task_metrics/events`, { method: 'POST', headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: handle.task_id, follow: true, poll_interval: 0.1 } }) });
  t.equal(res.headers.get('content-type')?.split(';')[0], 'text/event-stream');
  const reader = res.body!.getReader();
  let raw = '';
  // Bytes arrive split anywhere: only whole frames are parsed.
  const events = () => (raw.includes('\n\n') ? parseSse(raw.slice(0, raw.lastIndexOf('\n\n') + 2)) : []);
  const steps = () => events().filter((e) => e['kind'] === 'metrics').flatMap((e) => (e as unknown as TaskMetricsChunk).series['loss'] ?? []).map((p) => p.step);
  const readUntil = async (done: () => boolean) => {
    while (!done()) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      raw += Buffer.from(value).toString('utf8');
    }
  };
  await readUntil(() => steps().length >= 3);
  t.same(steps(), [0, 1, 2], 'the first three epochs arrive while the Task runs');
  t.equal((await svc.call('status', { task_id: handle.task_id })).body.answer.state, 'running', 'seen live, before the end');
  await writeFile(join(svc.workspace, 'command', handle.task_id, 'go'), '');
  await readUntil(() => events().some((e) => e['kind'] === 'result'));
  t.same(steps(), [0, 1, 2, 3, 4], 'then the rest, each point once');
  const result = events().at(-1) as { success: boolean; answer: TaskMetricsChunk };
  t.equal(result.success, true);
  t.same(result.answer.series, {}, 'the result carries no points: they were sent as events');
  t.equal(result.answer.cursor, (await stat(metricsFile(svc, handle))).size, 'and the cursor at the end of the file');
  await waitFor(async () => (await svc.call('status', { task_id: handle.task_id })).body.answer.state === 'succeeded', 10_000, 'the Task to succeed');
});

t.test('over MCP with follow and a progress token, the latest values arrive as progress messages while the Task runs', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', '-c', GATED] });
  const mcp = await connectMcp(t, svc.url, svc.token);
  const messages: string[] = [];
  const call = mcp.callTool({ name: 'read_task_metrics', arguments: { task_id: handle.task_id, follow: true, poll_interval: 0.1 } }, undefined, { onprogress: (p) => messages.push(p.message ?? '') });
  await waitFor(() => messages.some((m) => m === 'loss 0.3333 @2'), 20_000, 'the latest loss as a progress message');
  t.equal((await svc.call('status', { task_id: handle.task_id })).body.answer.state, 'running', 'seen while the Task runs');
  await writeFile(join(svc.workspace, 'command', handle.task_id, 'go'), '');
  const result = await call;
  t.match(result.structuredContent, { success: true, answer: { series: {}, has_more: false } }, 'the answer carries the cursor');
});

t.test('a torn last line waits for its end, bad lines are skipped, a cursor inside a line moves on', async (t) => {
  const svc = await shared;
  const handle = await pythonTask(t, svc);
  const file = metricsFile(svc, handle);
  const { cursor: end } = await read(svc, handle.task_id);

  const point = JSON.stringify({ name: 'loss', value: 0.01, step: 9, timestamp: new Date().toISOString() });
  await appendFile(file, point.slice(0, 20));
  t.same(await read(svc, handle.task_id, { cursor: end }), { series: {}, cursor: end, has_more: false, reset: false }, 'a half-written point is left for the next read');
  await appendFile(file, `${point.slice(20)}\nnot json\n{"name":"loss","value":"high","timestamp":"x"}\n[1]\n{"name":"","value":1,"timestamp":"x"}\n{"name":"lr","value":0.1,"step":1.5,"timestamp":"x"}\n`);
  await appendFile(file, `${JSON.stringify({ name: '__proto__', value: 7, timestamp: 'x' })}\n`);
  const rest = await read(svc, handle.task_id, { cursor: end });
  t.same(Object.keys(rest.series).sort(), ['__proto__', 'loss'], 'the completed point and a series named __proto__; the bad lines are skipped');
  t.same(rest.series['loss'], [JSON.parse(point) as Record<string, unknown>].map(({ value, step, timestamp }) => ({ value, step, timestamp })));
  t.same(rest.series['__proto__']!.map((p) => p.value), [7]);

  const inside = await read(svc, handle.task_id, { cursor: end + 5 });
  t.same(Object.keys(inside.series), ['__proto__'], 'a cursor inside a line starts at the next line');
  const past = await read(svc, handle.task_id, { cursor: rest.cursor + 100 });
  t.equal(past.reset, true, 'a cursor past the end reads from the start with reset');
  t.equal(past.series['loss']?.length, 6);
});

t.test('a metrics.jsonl that is a link or a FIFO is refused, not followed', async (t) => {
  const svc = await shared;
  const handle = await pythonTask(t, svc);
  const file = metricsFile(svc, handle);
  const outside = await mkdtemp(join(tmpdir(), 'taskyard-metrics-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await writeFile(join(outside, 'secret.jsonl'), '{"name":"secret","value":42,"timestamp":"x"}\n');
  await rm(file);
  await symlink(join(outside, 'secret.jsonl'), file);
  const linked = await svc.call('read_task_metrics', { task_id: handle.task_id });
  t.equal(linked.body.success, false);
  t.equal(linked.body.answer, `PermissionError: metrics.jsonl of ${handle.task_id} is not a regular file (symbolic link); it is not read`);

  await rm(file);
  execFileSync('mkfifo', [file]);
  const fifo = await svc.call('read_task_metrics', { task_id: handle.task_id });
  t.match(fifo.body.answer, /^PermissionError: metrics\.jsonl of .* is not a regular file \(named pipe\)/, 'a FIFO is refused at once (no wait for a writer)');
  t.equal((await svc.call('status', { task_id: handle.task_id })).body.success, true, 'the service goes on');
});

t.test('a big metrics.jsonl is read in bounded windows, a line longer than a window skipped', async (t) => {
  const svc = await shared;
  const handle = await pythonTask(t, svc);
  const file = metricsFile(svc, handle);
  const POINTS = 120_000;
  const stamp = new Date().toISOString();
  const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `{"name":"s${(from + i) % 7}","value":${from + i},"step":${from + i},"timestamp":"${stamp}"}\n`).join('');
  // Half the points, a 2 MiB line no point could be, the other half.
  await writeFile(file, lines(0, POINTS / 2) + `{"name":"huge","value":1,"pad":"${'x'.repeat(2 * 1024 * 1024)}"}\n` + lines(POINTS / 2, POINTS));

  let pages = 0;
  const { all } = await readAll(svc, handle.task_id, { max_points: 50_000 }, (page, from) => {
    pages++;
    t.ok(page.cursor - from <= 1024 * 1024 + 1, `window ${pages} reads at most 1 MiB (${page.cursor - from} bytes)`);
  });
  t.same(Object.keys(all).sort(), ['s0', 's1', 's2', 's3', 's4', 's5', 's6'], 'the long line is skipped');
  const values = Object.values(all).flat().map((p) => (p as { value: number }).value).sort((a, b) => a - b);
  t.equal(values.length, POINTS, 'every point arrives once');
  t.ok(values.every((v, i) => v === i), 'none lost, none repeated');
  t.ok(pages >= 8, `read in ${pages} windows`);
});

t.test('the runner does not append metric points through a link planted at metrics.jsonl', async (t) => {
  const svc = await shared;
  const outside = await mkdtemp(join(tmpdir(), 'taskyard-metrics-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  const target = join(outside, 'target.txt');
  await writeFile(target, 'untouched\n');
  const script = `import os, taskyard_task as tt\nos.symlink(${JSON.stringify(target)}, "metrics.jsonl")\ntt.metric("loss", 0.5, step=1)\n`;
  const handle = await submitOk(t, svc, { task: 'command', argv: ['python3', '-c', script] });
  const { status } = await waitTask(svc, handle);
  t.equal(status.state, 'succeeded', 'the Task still succeeds: its metric points are dropped, not the run');
  t.equal(await readFile(target, 'utf8'), 'untouched\n', 'nothing written outside the Task directory');
  const log = (await svc.call('read_task_log', { task_id: handle.task_id, offset: 0 })).body.answer;
  t.match(log, { content: /metric points dropped from here on: .*metrics\.jsonl is not a regular file \(symbolic link\)/ }, 'the log says why');
});

t.test('unit: windows of any size, cut anywhere in a line, give every point once and in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-metrics-windows-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'metrics.jsonl');
  // Lines of varied lengths (names up to 60 characters, some steps missing), a few bad ones, a torn tail.
  const lines = Array.from({ length: 300 }, (_, i) => (i % 37 === 5 ? 'oops\n' : `${JSON.stringify(i % 4 ? { name: 'm'.repeat(1 + (i % 60)), value: i, step: i, timestamp: 't' } : { name: 'plain', value: i, timestamp: 't' })}\n`));
  await writeFile(file, `${lines.join('')}{"name":"torn","val`);
  const expected = lines.flatMap((l, i) => (l === 'oops\n' ? [] : [i]));
  for (const windowBytes of [40, 64, 97, 256, 1000, 1 << 20]) {
    for (const maxPoints of [1, 7, 1000]) {
      const seen: number[] = [];
      let cursor = 0;
      let calls = 0;
      let back = false;
      for (;;) {
        const chunk = await readMetricsWindow(file, cursor, maxPoints, windowBytes);
        for (const points of Object.values(chunk.series)) seen.push(...points.map((p) => p.value as number));
        back ||= chunk.cursor < cursor;
        cursor = chunk.cursor;
        if (!chunk.has_more || ++calls > 10_000) break;
      }
      t.notOk(back, 'the cursor never steps back');
      seen.sort((a, b) => a - b);
      // A window smaller than a line skips that line (it is longer than any point may be): only then are points lost.
      const longest = Math.max(...lines.map((l) => Buffer.byteLength(l)));
      if (windowBytes > longest) t.same(seen, expected, `window ${windowBytes} B, ${maxPoints} points a call: every point once`);
      else t.ok(seen.every((v, i) => i === 0 || v > seen[i - 1]!), `window ${windowBytes} B: no point twice`);
      t.not(cursor, (await stat(file)).size, 'the torn tail is left unread');
    }
  }
});
