import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { printTable } from './lib/table.js';
import { writeDemoRecords } from './lib/task-records.js';

const RECORDS = 100_000;
const SCRAPES = 200;

/** Median and p99 wall time (ms) of `GET path`, one request at a time, after a warm-up. */
async function timeGets(svc: ServiceProcess, path: string, check: (text: string) => boolean = () => true): Promise<{ p50: number; p99: number; bytes: number }> {
  const get = async () => {
    const res = await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    const text = await res.text();
    if (res.status !== 200 || !check(text)) throw new Error(`${path}: ${res.status} ${text.slice(0, 2000)}`);
    return text.length;
  };
  for (let i = 0; i < 20; i++) await get();
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < SCRAPES; i++) {
    const start = performance.now();
    bytes = await get();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]!, bytes };
}

/**
 * `GET /metrics` with 100,000 Task records against an empty workspace and `GET /health` (the HTTP
 * floor), in one run. Target: a scrape under 5 ms with 100,000 records.
 */
export async function run(): Promise<void> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-metrics-'));
  const rows: Array<Array<string | number>> = [];
  try {
    writeDemoRecords(workspace, RECORDS);
    for (const [label, ws, count] of [['empty workspace', undefined, 0], [`${RECORDS.toLocaleString('en')} Task records`, workspace, RECORDS]] as const) {
      const svc = await startServiceProcess(ws ? { workspace: ws } : {});
      try {
        const health = await timeGets(svc, '/health');
        // The scrape must count every record, or it would be cheap for the wrong reason.
        const metrics = await timeGets(svc, '/metrics', (text) => text.includes(`taskyard_tasks{state="succeeded"} ${count}\n`));
        rows.push([`GET /metrics, ${label}`, metrics.p50, metrics.p99, metrics.bytes], [`GET /health, ${label} (floor)`, health.p50, health.p99, health.bytes]);
      } finally {
        await svc.stop();
      }
    }
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
  printTable(`Prometheus scrape cost (${SCRAPES} sequential requests, client fetch in the bench process)`, ['case', 'p50 ms', 'p99 ms', 'bytes'], rows);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
