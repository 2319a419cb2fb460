/**
 * A hostile target's event streams (issue 33, item 4): the service's RSS and `/health` latency
 * while STREAMS forwarded `/events` calls each receive up to STREAM_MB of empty `data:` lines
 * (`servers/hostile-target.ts`, in its own process), beside the same figures measured idle
 * just before. Targets: RSS growth < 100 MB, `/health` p99 < 20 ms. The reader counts an event's
 * bytes as received, so each stream is cut after 32 MiB on the wire with a failed result.
 * The floor: a bare uWS relay (`servers/bare-sse-relay.ts`) reading the same streams, finding
 * event boundaries with indexOf and nothing else. Then the price of checking large forwarded
 * answers while they stream (item 5): ANSWER_MIB of JobResponse read through the service against
 * reading it from the target directly, alternating. BENCH_BASELINE_ROOT: another build's package
 * root (the previous one), measured in the same run the same way.
 */
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer } from './lib/child-server.js';
import { percentile, RawConnection, rawRequest } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const STREAMS = Number(process.env['BENCH_HOSTILE_STREAMS'] ?? 5);
const STREAM_MB = Number(process.env['BENCH_HOSTILE_MB'] ?? 500);
const IDLE_MS = 2000;
const ANSWER_MIB = Number(process.env['BENCH_HOSTILE_ANSWER_MIB'] ?? 256);
const ROUNDS = 3;
const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** `/health` one request at a time on one keep-alive connection until `until` resolves; latencies in ms, and the peak RSS seen. */
async function sample(port: number, pid: number, until: Promise<unknown>): Promise<{ latencies: number[]; peakRss: number }> {
  const conn = await RawConnection.open(port);
  const health = rawRequest('GET', '/health', auth);
  const latencies: number[] = [];
  let peakRss = 0;
  let done = false;
  void until.finally(() => (done = true));
  try {
    while (!done) {
      const start = performance.now();
      await conn.request(health);
      latencies.push(performance.now() - start);
      if (latencies.length % 10 === 0) peakRss = Math.max(peakRss, await rssMb(pid));
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    conn.close();
  }
  return { latencies: latencies.sort((a, b) => a - b), peakRss: Math.max(peakRss, await rssMb(pid)) };
}

/** MiB/s of one POST's answer, read whole; throws unless it is the complete JobResponse. */
async function readRate(url: string, body: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', headers: auth, body });
  let size = 0;
  let last = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    last = chunk[chunk.byteLength - 1] ?? last;
  }
  if (res.status !== 200 || size < ANSWER_MIB * 2 ** 20 || last !== 0x7d) throw new Error(`a broken answer from ${url}: HTTP ${res.status}, ${size} bytes`);
  return size / 2 ** 20 / ((performance.now() - start) / 1000);
}

interface Phases {
  idle: { latencies: number[]; peakRss: number };
  busy: { latencies: number[]; peakRss: number };
  idleRss: number;
  afterRss: number;
  cut: number;
  seconds: number;
}

/** `/health` idle, then while STREAMS event streams are opened by POSTs to `streamUrl` and read to their end. */
async function hostilePhases(port: number, pid: number, streamUrl: string, body: string): Promise<Phases> {
  const idleRss = await rssMb(pid);
  const idle = await sample(port, pid, new Promise((r) => setTimeout(r, IDLE_MS)));
  const started = performance.now();
  const streams = Promise.all(Array.from({ length: STREAMS }, async () => (await fetch(streamUrl, { method: 'POST', headers: auth, body })).text()));
  const busy = await sample(port, pid, streams);
  const seconds = (performance.now() - started) / 1000;
  const cut = (await streams).filter((text) => /oversized event/.test(text)).length;
  return { idle, busy, idleRss, afterRss: await rssMb(pid), cut, seconds };
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-hostile-'));
  const target = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'hostile-target.js'), [String(STREAM_MB), String(ANSWER_MIB)]);
  const targetUrl = `http://127.0.0.1:${target.port}`;
  const sent: number[] = [];
  target.child.stdout!.on('data', (d: Buffer) => {
    for (const m of d.toString().matchAll(/SENT (\d+)/g)) sent.push(Number(m[1]));
  });
  const config = join(dir, 'service.yaml');
  await writeFile(config, JSON.stringify({ targets: [{ address: targetUrl, token: 'unused' }] }));
  const svc = await startServiceProcess({ adapter: 'uws', args: ['--config', config] });
  const baselineRoot = process.env['BENCH_BASELINE_ROOT'];
  const baseline = baselineRoot ? await startServiceProcess({ adapter: 'uws', args: ['--config', config], root: baselineRoot }) : undefined;
  try {
    const rows: Array<Array<string | number>> = [];
    const report = (name: string, p: Phases, sentNow: number[]) => {
      const row = (phase: string, s: { latencies: number[]; peakRss: number }, extra: string) =>
        [`${name}: ${phase}`, s.latencies.length, percentile(s.latencies, 50), percentile(s.latencies, 99), s.peakRss.toFixed(0), (s.peakRss - p.idleRss).toFixed(0), extra];
      rows.push(row('idle', p.idle, ''));
      rows.push(row('hostile streams', p.busy, `${p.cut}/${STREAMS} cut as oversized in ${p.seconds.toFixed(1)} s; target sent ${sentNow.map((b) => (b / 2 ** 20).toFixed(0)).join(', ')} MiB; RSS after ${p.afterRss.toFixed(0)} MB`));
    };
    const forwarded = JSON.stringify({ arguments: {}, target: targetUrl });
    report('service', await hostilePhases(svc.port, svc.child.pid!, `${svc.url}/jobs/anything/events`, forwarded), sent.splice(0));
    if (baseline) report('previous build', await hostilePhases(baseline.port, baseline.child.pid!, `${baseline.url}/jobs/anything/events`, forwarded), sent.splice(0));
    const floor = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-sse-relay.js'), [String(target.port)]);
    try {
      report('floor: bare uWS relay', await hostilePhases(floor.port, floor.child.pid!, `http://127.0.0.1:${floor.port}/relay`, '{}'), sent.splice(0));
    } finally {
      await floor.stop();
    }
    printTable(
      `${STREAMS} forwarded /events streams of up to ${STREAM_MB} MB of empty data: lines (uWS front end), beside a bare uWS relay that only finds event boundaries (floor); targets: RSS growth < 100 MB, /health p99 < 20 ms`,
      ['server: phase', '/health calls', 'p50 ms', 'p99 ms', 'peak RSS MB', 'RSS growth MB', 'streams'],
      rows,
    );
    const paths: Array<[string, string, string]> = [
      ['target directly (baseline)', `${targetUrl}/jobs/large`, '{"arguments":{}}'],
      ['forwarded, checked while it streams', `${svc.url}/jobs/large`, forwarded],
      ...(baseline ? [['forwarded by the previous build', `${baseline.url}/jobs/large`, forwarded] as [string, string, string]] : []),
    ];
    const rates = paths.map(() => [] as number[]);
    for (let i = 0; i < ROUNDS; i++) for (const [at, [, url, body]] of paths.entries()) rates[at]!.push(await readRate(url, body));
    const best = (r: number[]) => Math.max(...r);
    printTable(`A ${ANSWER_MIB} MiB JobResponse, one client (best of ${ROUNDS} alternating rounds)`, ['path', 'MiB/s', 'x direct'], paths.map(([name], at) => [name, best(rates[at]!), (best(rates[at]!) / best(rates[0]!)).toFixed(2)]));
  } finally {
    await svc.stop();
    await baseline?.stop();
    await target.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
