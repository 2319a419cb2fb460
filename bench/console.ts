/**
 * The web console's costs on the service: how fast the built bundle is served (the page, its
 * gzipped script) next to `GET /health` on the same front end (the floor), and what one refresh
 * of the Tasks page costs (`list_task_statuses`: bytes and time) as the number of Tasks grows,
 * which is why the page spaces its refreshes by their cost.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest, runLoad, type LoadResult } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const CONNECTIONS = 50;
const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };

async function staticServing(): Promise<void> {
  const svc = await startServiceProcess({ adapter: 'uws' });
  try {
    const html = await (await fetch(`${svc.url}/`)).text();
    const script = /src="([^"]+\.js)"/.exec(html)?.[1];
    if (!script) throw new Error('the console is not built: run npm run build');
    const scriptBytes = (await (await fetch(`${svc.url}${script}`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer()).byteLength;
    const cases: Array<[string, Buffer]> = [
      ['GET /health (floor)', rawRequest('GET', '/health', auth)],
      ['GET / (index.html)', rawRequest('GET', '/')],
      [`GET ${script} gzip`, rawRequest('GET', script, { 'accept-encoding': 'gzip' })],
      [`GET ${script} identity (${Math.round(scriptBytes / 1024)} KiB)`, rawRequest('GET', script)],
      ['GET script, If-None-Match (304)', rawRequest('GET', script, { 'if-none-match': (await fetch(`${svc.url}${script}`)).headers.get('etag') ?? '' })],
    ];
    const rows: Array<[string, LoadResult]> = [];
    for (const [name, request] of cases) rows.push([name, await runLoad({ port: svc.port, request, connections: CONNECTIONS, durationMs: DURATION_MS })]);
    const floor = rows[0]![1].rps;
    printTable(
      `Console bundle served by the uWS front end, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s each`,
      ['request', 'req/s', 'p50 ms', 'p99 ms', 'non-200', 'x /health'],
      rows.map(([name, r]) => [name, r.rps, r.p50, r.p99, r.errors, (r.rps / floor).toFixed(2)]),
    );
  } finally {
    await svc.stop();
  }
}

/** Writes `count` finished Task records, as a long-lived workspace would hold them. */
async function seed(workspace: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const id = `base#demo#t-${i}`;
    const dir = join(workspace, 'base', id);
    await mkdir(dir, { recursive: true });
    const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    await writeFile(join(dir, 'status.json'), JSON.stringify({ task_id: id, run_id: `r${i}`, task_type: 'base', task_name: 'demo', state: 'succeeded', created_at: at, started_at: at, finished_at: at, config: { x: i, y: 1, task_name: `t-${i}`, source_tasks: '' }, steps: [{ name: 'compute', started_at: at, finished_at: at, percentage: 100 }], result: { result: i + 1, branch: 'different', operands: ['x', 'y'], artifacts: {} } }));
  }
}

async function taskListRefresh(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  let base = 0;
  for (const count of [100, 1000, 3000]) {
    const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-console-'));
    await seed(workspace, count);
    // The service builds its task index from the seeded records at start.
    const loaded = await startServiceProcess({ adapter: 'uws', workspace });
    try {
      const call = () => fetch(`${loaded.url}/jobs/list_task_statuses`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' }).then((r) => r.text());
      let bytes = 0;
      for (let i = 0; i < 3; i++) bytes = (await call()).length;
      const samples: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        await call();
        samples.push(performance.now() - t0);
      }
      samples.sort((a, b) => a - b);
      const median = samples[Math.floor(samples.length / 2)]!;
      if (count === 100) base = median;
      rows.push([count, `${(bytes / 1024).toFixed(0)} KiB`, median.toFixed(1), (median / base).toFixed(1), `${Math.max(1000, median * 5).toFixed(0)} ms`]);
    } finally {
      await loaded.stop();
      await rm(workspace, { recursive: true, force: true });
    }
  }
  printTable('One Tasks-page refresh (list_task_statuses over HTTP JSON), median of 15', ['tasks', 'answer', 'ms', 'x 100 tasks', 'page refresh pause'], rows);
}

export async function run(): Promise<void> {
  await staticServing();
  await taskListRefresh();
}

if (isMain(import.meta.url)) await run();
