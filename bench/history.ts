/**
 * A year of history (issue 18, and point 4 of issue 19): what N finished Task records on disk
 * cost the service. Records are written straight to the workspace while the service is stopped
 * (the real record format), growing one workspace through 1k, 10k, 100k and 300k; at each size the
 * service is started cold (no index file of its own: it reads every record) and then warm (the
 * index file the cold run wrote at its stop). Before issue 18 both are the same start. Targets at 300,000 records: start < 3 s,
 * RSS idle < 250 MB, < 400 MB during a full listing; `status` p99 < 10 ms while a client lists in
 * a loop with a Task running; `query_task_statuses` with `changed_since` after 10 changes < 5 ms
 * and < 10 KB.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { percentile, RawConnection, rawRequest } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { writeDemoRecords } from './lib/task-records.js';
import { TASK_ROW_FIELDS } from '../schemas/task-rows.js';

const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
const SIZES = (process.env['HISTORY_SIZES'] ?? '1000,10000,100000,300000').split(',').map(Number);
/** The service's own index file (absent before issue 18): removed for a cold start. */
const INDEX_FILE = join('.taskyard', 'task-index');

async function rssMb(pid: number, field = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
}

async function call<T>(svc: ServiceProcess, name: string, args: Record<string, unknown> = {}): Promise<{ answer: T; success: boolean; bytes: number }> {
  const res = await fetch(`${svc.url}/jobs/${name}`, { method: 'POST', headers: auth, body: JSON.stringify({ arguments: args }) });
  const text = await res.text();
  return { ...(JSON.parse(text) as { answer: T; success: boolean }), bytes: Buffer.byteLength(text) };
}

/** One full listing, to its last byte (not parsed: the client's parse is not the service's cost). */
async function listOnce(port: number): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/jobs/list_task_statuses`, { method: 'POST', headers: auth, body: '{"arguments":{}}' });
  let bytes = 0;
  let tail = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    tail = (tail + Buffer.from(chunk).toString('latin1')).slice(-40);
  }
  if (!tail.includes('"success":true')) throw new Error(`list_task_statuses did not succeed: ...${tail}`);
  return { ms: performance.now() - t0, bytes };
}

/** Lists in a loop (argv: service URL, token) until SIGTERM, then prints how many listings it finished. */
const LISTER = `
const [url, token] = process.argv.slice(1);
let n = 0;
process.on('SIGTERM', () => { process.stdout.write(n + '\\n'); process.exit(0); });
for (;;) {
  try {
    const res = await fetch(url + '/jobs/list_task_statuses', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
    for await (const chunk of res.body) void chunk;
    n++;
  } catch (err) {
    // A broken listing is reported and the loop goes on (it once ended the lister and hung the bench).
    console.error('lister: a listing failed:', err.cause?.code ?? err.message);
  }
}`;

/** Starts the service and times it until `/health` answers. */
async function startTimed(workspace: string): Promise<{ svc: ServiceProcess; seconds: number }> {
  const t0 = performance.now();
  const svc = await startServiceProcess({ workspace });
  for (;;) {
    const res = await fetch(`${svc.url}/health`, { headers: auth }).catch(() => undefined);
    if (res?.status === 200) break;
    await delay(10);
  }
  return { svc, seconds: (performance.now() - t0) / 1000 };
}

/** Samples RSS every 5 ms while `work` runs; the highest sample. */
async function peakDuring<T>(pid: number, work: Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await rssMb(pid));
      await delay(5);
    }
  })();
  const value = await work.finally(() => (done = true));
  await sampler;
  return { value, peak };
}

async function measure(workspace: string, n: number, warm: boolean): Promise<Array<string | number>> {
  if (!warm) await rm(join(workspace, INDEX_FILE), { force: true });
  const { svc, seconds } = await startTimed(workspace);
  const pid = svc.child.pid!;
  try {
    await delay(2000);
    const idle = await rssMb(pid);
    const { value: first, peak } = await peakDuring(pid, listOnce(svc.port));
    const second = await listOnce(svc.port);
    const after = await rssMb(pid);
    return [`${n.toLocaleString('en')} ${warm ? 'warm' : 'cold'}`, seconds, idle, `${after.toFixed(0)} (${peak.toFixed(0)})`, first.ms, second.ms, `${(first.bytes / 1e6).toFixed(2)} MB`];
  } finally {
    await svc.stop();
  }
}

/** `status` latency on its own connection while another client lists in a loop, a Task running. */
async function statusWhileListing(workspace: string): Promise<Array<Array<string | number>>> {
  const { svc } = await startTimed(workspace);
  const rows: Array<Array<string | number>> = [];
  try {
    const sleeper = (await call<{ task_id: string; run_id: string }>(svc, 'submit', { task: 'sleep', seconds: 600 })).answer;
    const conn = await RawConnection.open(svc.port);
    const statusRequest = rawRequest('POST', '/jobs/status', auth, JSON.stringify({ arguments: { task_id: sleeper.task_id } }));
    const sample = async (ms: number) => {
      const times: number[] = [];
      const end = performance.now() + ms;
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await conn.request(statusRequest);
        if (res.status !== 200) throw new Error(`status answered ${res.status}`);
        times.push(performance.now() - t0);
        await delay(2);
      }
      return times.sort((a, b) => a - b);
    };
    const quiet = await sample(3000);
    rows.push(['nobody lists', quiet.length, percentile(quiet, 50), percentile(quiet, 99), percentile(quiet, 100)]);
    // The lister is a process of its own: reading 150 MB per listing in this one would delay
    // the status answers here and count the client's own event loop as the service's latency.
    const lister = spawn(process.execPath, ['--input-type=module', '-e', LISTER, svc.url, BENCH_TOKEN], { stdio: ['ignore', 'pipe', 'inherit'] });
    let counted = '';
    lister.stdout.on('data', (d: Buffer) => (counted += d.toString()));
    const busy = await sample(10_000);
    const exited = lister.exitCode !== null || lister.signalCode !== null ? Promise.resolve() : once(lister, 'exit');
    lister.kill('SIGTERM');
    await exited;
    const listings = Number(counted.trim());
    rows.push([`one client lists in a loop (${listings} listings)`, busy.length, percentile(busy, 50), percentile(busy, 99), percentile(busy, 100)]);
    conn.close();
    await call(svc, 'cancel', { task_id: sleeper.task_id });
    rows.push(...(await changedSince(svc)));
  } finally {
    await svc.stop();
  }
  return rows;
}

/** `query_task_statuses` with the cursor taken before 10 changes (Tasks submitted and finished). */
async function changedSince(svc: ServiceProcess): Promise<Array<Array<string | number>>> {
  const first = await call<{ version?: string }>(svc, 'query_task_statuses', { limit: 1 });
  if (!first.success) return [['query_task_statuses: not available', '', '', '', '']];
  const cursor = first.answer.version;
  for (let i = 0; i < 10; i++) {
    const handle = (await call<{ task_id: string; run_id: string }>(svc, 'submit', { task: 'demo', x: i, y: 1 })).answer;
    await call(svc, 'wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  }
  const conn = await RawConnection.open(svc.port);
  const rows: Array<Array<string | number>> = [];
  // What the console's Tasks page asks for, then whole statuses (the answer without `fields`).
  for (const [label, fields] of [['the console\'s fields', { fields: TASK_ROW_FIELDS }], ['whole statuses', {}]] as const) {
    const request = rawRequest('POST', '/jobs/query_task_statuses', auth, JSON.stringify({ arguments: { changed_since: cursor, ...fields } }));
    const times: number[] = [];
    let bytes = 0;
    let count = 0;
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      const res = await conn.request(request);
      times.push(performance.now() - t0);
      bytes = res.body.length;
      count = (JSON.parse(res.body.toString()) as { answer: { items: unknown[] } }).answer.items.length;
    }
    times.sort((a, b) => a - b);
    rows.push([`query_task_statuses changed_since after 10 changes, ${label} (${count} items, ${(bytes / 1024).toFixed(1)} KB)`, times.length, percentile(times, 50), percentile(times, 99), percentile(times, 100)]);
  }
  conn.close();
  return rows;
}

export async function run(): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'taskyard-history-'));
  const rows: Array<Array<string | number>> = [];
  try {
    let written = 0;
    for (const n of SIZES) {
      const t0 = performance.now();
      writeDemoRecords(workspace, n, written);
      console.log(`wrote records ${written}..${n - 1} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      written = n;
      // Cold first: that start reads every record and writes the index file the warm start reads.
      rows.push(await measure(workspace, n, false));
      rows.push(await measure(workspace, n, true));
    }
    printTable(
      'N finished records on disk (targets at 300,000: start < 3 s, RSS idle < 250 MB, listing peak < 400 MB)',
      ['records, start', 'start until /health s', 'RSS idle MB', 'RSS after listing (peak) MB', 'first listing ms', 'second listing ms', 'listing bytes'],
      rows,
    );
    printTable(
      `At ${written.toLocaleString('en')} records with a Task running (targets: status p99 < 10 ms; changed_since < 5 ms, < 10 KB)`,
      ['call', 'calls', 'p50 ms', 'p99 ms', 'max ms'],
      await statusWhileListing(workspace),
    );
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
