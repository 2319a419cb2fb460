// Runs on every HTTP front end.
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';

/** Scrapes /metrics and parses it with a real Prometheus text-format parser. */
async function scrape(svc: TestService): Promise<Map<string, ParsedFamily>> {
  const res = await svc.fetch('/metrics');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return new Map(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f]));
}

/** The value of one sample (0 when absent), matched by a subset of its labels. */
function sample(families: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(found?.value ?? found?.count ?? 0);
}

// One service for the first two tests: the first reads no Task counts but zeros (the second runs
// no Task), the second reads only how its own calls moved the counters.
const shared = await startTestService(t);

t.test('GET /metrics: Prometheus text under the bearer rule, with the process metrics', async (t) => {
  const svc = shared;
  t.equal((await fetch(`${svc.url}/metrics`)).status, 401, 'no token, no metrics');
  const res = await svc.fetch('/metrics');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const families = await scrape(svc);
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) t.ok(families.has(name), `${name} is there`);
  t.equal(families.get('taskyard_job_call_duration_seconds')?.type, 'HISTOGRAM');
  t.equal(families.get('taskyard_task_spawn_seconds')?.type, 'HISTOGRAM');
  for (const state of ['queued', 'running', 'succeeded', 'failed', 'cancelled']) t.equal(sample(families, 'taskyard_tasks', { state }), 0, `no ${state} Tasks yet`);
});

t.test('GET /metrics: Job calls move by name, transport and outcome; latency is observed', async (t) => {
  const svc = shared;
  const before = await scrape(svc);
  await svc.call('version');
  await svc.call('version');
  await svc.events('version');
  const mcp = await connectMcp(t, svc.url, svc.token);
  await mcp.callTool({ name: 'version', arguments: {} });
  await svc.call('shell', { command: 'exit 3' });
  const after = await scrape(svc);
  const moved = (labels: Record<string, string>) => sample(after, 'taskyard_job_calls_total', labels) - sample(before, 'taskyard_job_calls_total', labels);
  t.equal(moved({ job: 'version', transport: 'http', outcome: 'success' }), 2);
  t.equal(moved({ job: 'version', transport: 'sse', outcome: 'success' }), 1);
  t.equal(moved({ job: 'version', transport: 'mcp', outcome: 'success' }), 1);
  t.equal(moved({ job: 'shell', transport: 'http', outcome: 'failure' }), 1, 'a business failure is counted as such');
  // The parser merges the samples of a labelled histogram; its lines are read as written.
  const text = await (await svc.fetch('/metrics')).text();
  const line = (suffix: string) => Number(new RegExp(`^taskyard_job_call_duration_seconds_${suffix}\\{job="version",transport="http",outcome="success"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  t.equal(line('count'), 2, 'two latencies observed');
  t.ok(line('sum') > 0);
});

t.test('GET /metrics: Tasks by state, queue and runs in flight, spawn latency, SSE followers, transfer bytes', async (t) => {
  const svc = await startTestService(t);
  const submitted = await svc.call('submit', { task: 'sleep', seconds: 30 });
  const handle = submitted.body.answer;
  // A follower over SSE, held open while the Task sleeps.
  const follower = new AbortController();
  const stream = svc
    .fetch('/jobs/stream_task/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: handle.task_id } }), signal: follower.signal })
    .then(async (r) => {
      for await (const chunk of r.body!) void chunk; // read until the stream ends
    })
    .catch(() => undefined);
  const running = await waitFor(async () => {
    const m = await scrape(svc);
    return sample(m, 'taskyard_task_runs_in_flight') === 1 && sample(m, 'taskyard_job_calls_in_flight', { job: 'stream_task', transport: 'sse' }) === 1 ? m : null;
  }, 15_000, 'a running Task and one SSE follower');
  t.equal(sample(running, 'taskyard_tasks', { state: 'running' }), 1);
  t.equal(sample(running, 'taskyard_task_queue_length'), 0);
  t.equal(sample(running, 'taskyard_task_spawn_seconds'), 1, 'one spawn observed');
  t.ok(Number(running.get('taskyard_task_spawn_seconds')?.metrics[0]?.sum) > 0, 'with a positive duration');

  await svc.call('cancel', { task_id: handle.task_id });
  const done = await waitFor(async () => {
    const m = await scrape(svc);
    return sample(m, 'taskyard_tasks', { state: 'cancelled' }) === 1 && sample(m, 'taskyard_job_calls_in_flight', { job: 'stream_task', transport: 'sse' }) === 0 ? m : null;
  }, 15_000, 'the Task cancelled and the follower gone');
  t.equal(sample(done, 'taskyard_tasks', { state: 'running' }), 0);
  t.equal(sample(done, 'taskyard_task_runs_in_flight'), 0);
  follower.abort();
  await stream;

  await svc.call('delete_tasks', { task_ids: [handle.task_id] });
  t.equal(sample(await waitFor(async () => {
    const m = await scrape(svc);
    return sample(m, 'taskyard_tasks', { state: 'cancelled' }) === 0 ? m : null;
  }, 10_000, 'the deleted Task uncounted'), 'taskyard_tasks', { state: 'cancelled' }), 0, 'a deleted Task leaves the counts');

  await writeFile(join(svc.workspace, 'data.bin'), Buffer.alloc(12_345, 7));
  await (await svc.fetch('/files?path=data.bin')).arrayBuffer();
  await (await svc.fetch('/files?path=data.bin', { headers: { range: 'bytes=0-99' } })).arrayBuffer();
  await svc.fetch('/files', { method: 'POST', headers: { 'x-file-name': 'up.bin', 'content-type': 'application/octet-stream' }, body: Buffer.alloc(4321, 1) });
  const bytes = await scrape(svc);
  t.equal(sample(bytes, 'taskyard_download_bytes_total'), 12_345 + 100);
  t.equal(sample(bytes, 'taskyard_upload_bytes_total'), 4321);
});
