/**
 * Cost of the fleet paths, each next to its own direct baseline measured in the same run:
 * a forwarded `POST /jobs/version` (A → B with B's stored token) against calling B directly and
 * against the floor of any forwarder (`servers/bare-relay.ts`: uWS relaying to B over kept-alive
 * raw sockets, nothing checked), in alternating rounds (`BENCH_FLEET_ROUNDS`, default 3) so a
 * burst of load elsewhere on a shared machine does not land on one side only; the
 * same over SSE (`/jobs/version/events`, one complete stream per request), a
 * small GET through `/proxy` against the bare node:http upstream, and streaming a large body
 * through the proxy against reading it straight from the upstream.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer } from './lib/child-server.js';
import { rawRequest, runLoad, type LoadResult } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { processCpuSeconds } from '../harness/process-cpu.js';
import { isMain, printTable } from './lib/table.js';

const CONNECTIONS = 32;
const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_FLEET_ROUNDS'] ?? 3);
const STREAM_MIB = 128;
const MiB = 1024 * 1024;
const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

/** A load result with the CPU time per request of the load client (this process) and each server. */
type Costed = LoadResult & { cpu: string };

/**
 * Several loads of the same request, interleaved with the other paths by the caller: the mean
 * rate, the worst p99, and the CPU per request summed over rounds.
 */
class Rounds {
  readonly #runs: Array<LoadResult & { cpuParts: Record<string, number>; clientUs: number }> = [];

  constructor(readonly port: number, readonly request: Buffer, readonly servers: Record<string, number>) {}

  async once(): Promise<void> {
    const before = await Promise.all(Object.values(this.servers).map(processCpuSeconds));
    const client = process.cpuUsage();
    const result = await runLoad({ port: this.port, request: this.request, connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: 500 });
    const used = process.cpuUsage(client);
    const after = await Promise.all(Object.values(this.servers).map(processCpuSeconds));
    const cpuParts = Object.fromEntries(Object.keys(this.servers).map((name, i) => [name, (after[i]! - before[i]!) * 1e6]));
    this.#runs.push({ ...result, cpuParts, clientUs: used.user + used.system });
  }

  get result(): Costed {
    const runs = this.#runs;
    const answered = runs.reduce((n, r) => n + r.answered, 0);
    const per = (us: number) => (us / answered).toFixed(0);
    const parts = [`client ${per(runs.reduce((n, r) => n + r.clientUs, 0))}`, ...Object.keys(this.servers).map((name) => `${name} ${per(runs.reduce((n, r) => n + r.cpuParts[name]!, 0))}`)];
    return {
      requests: runs.reduce((n, r) => n + r.requests, 0),
      rps: runs.reduce((n, r) => n + r.rps, 0) / runs.length,
      p50: runs.reduce((n, r) => n + r.p50, 0) / runs.length,
      p99: Math.max(...runs.map((r) => r.p99)),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      answered,
      cpu: parts.join(' · '),
    };
  }
}

/**
 * One load, with what each request cost in CPU, client included: on two cores the client
 * competes with the servers, so a direct rate limited by the client shows up here.
 */
async function load(port: number, request: Buffer, servers: Record<string, number>): Promise<Costed> {
  const rounds = new Rounds(port, request, servers);
  await rounds.once();
  return rounds.result;
}

/** An upstream that streams STREAM_MIB of bytes in 1 MiB chunks, honouring backpressure. */
async function startStreamingUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const chunk = Buffer.alloc(MiB, 7);
  const server = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(STREAM_MIB * MiB) });
    for (let i = 0; i < STREAM_MIB; i++) if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }),
  };
}

/**
 * Complete SSE calls per second: `connections` loops each POST an `/events` call and read the
 * stream to its end, for `DURATION_MS`. Direct and forwarded streams use this same client.
 */
async function sseRate(url: string, body: string, connections: number): Promise<{ rps: number; errors: number }> {
  const deadline = performance.now() + DURATION_MS;
  let done = 0;
  let errors = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const res = await fetch(url, { method: 'POST', headers: auth, body });
      const text = await res.text();
      if (res.status === 200 && text.includes('event: result')) done++;
      else errors++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  return { rps: done / ((performance.now() - start) / 1000), errors };
}

/** MiB/s of reading one large body, best of three. */
async function downloadRate(url: string): Promise<number> {
  let best = 0;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    const res = await fetch(url);
    let size = 0;
    for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) size += c.byteLength;
    if (size !== STREAM_MIB * MiB) throw new Error(`short body: ${size}`);
    best = Math.max(best, size / MiB / ((performance.now() - start) / 1000));
  }
  return best;
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-fleet-'));
  const bare = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-node.js'));
  const streaming = await startStreamingUpstream();
  const b = await startServiceProcess({ adapter: 'uws' });
  const config = join(dir, 'a.yaml');
  await writeFile(config, JSON.stringify({
    targets: [{ address: b.url, token: BENCH_TOKEN }],
    proxy: { small: { url: `http://127.0.0.1:${bare.port}` }, big: { url: streaming.url } },
  }));
  const a = await startServiceProcess({ adapter: 'uws', args: ['--config', config] });
  const relay = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-relay.js'), [String(b.port), 'version', BENCH_TOKEN]);
  try {
    const pids = { A: a.child.pid!, B: b.child.pid! };
    const directRounds = new Rounds(b.port, rawRequest('POST', '/jobs/version', auth, '{"arguments":{}}'), pids);
    const forwardedRounds = new Rounds(a.port, rawRequest('POST', '/jobs/version', auth, JSON.stringify({ arguments: {}, target: b.url })), pids);
    const relayRounds = new Rounds(relay.port, rawRequest('POST', '/jobs/version', auth, JSON.stringify({ arguments: {}, target: b.url })), { relay: relay.child.pid!, B: b.child.pid! });
    for (let i = 0; i < ROUNDS; i++) for (const r of i % 2 ? [relayRounds, forwardedRounds, directRounds] : [directRounds, forwardedRounds, relayRounds]) await r.once();
    const [direct, forwarded, relayed] = [directRounds.result, forwardedRounds.result, relayRounds.result];
    const sseDirect = await sseRate(`${b.url}/jobs/version/events`, '{"arguments":{}}', CONNECTIONS);
    const sseForwarded = await sseRate(`${a.url}/jobs/version/events`, JSON.stringify({ arguments: {}, target: b.url }), CONNECTIONS);
    const upstream = await load(bare.port, rawRequest('GET', '/'), { A: a.child.pid!, bare: bare.child.pid! });
    const proxied = await load(a.port, rawRequest('GET', '/proxy/small/'), { A: a.child.pid!, bare: bare.child.pid! });
    printTable(`Fleet paths, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s each (version: mean of ${ROUNDS} alternating rounds; uWS front end)`, ['request', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'x baseline req/s', 'CPU µs per request'], [
      ['B: POST /jobs/version (baseline)', direct.rps, direct.p50, direct.p99, direct.errors, '1.00', direct.cpu],
      ['A → B: POST /jobs/version {target}', forwarded.rps, forwarded.p50, forwarded.p99, forwarded.errors, (forwarded.rps / direct.rps).toFixed(2), forwarded.cpu],
      ['bare uWS relay → B (floor of forwarding)', relayed.rps, relayed.p50, relayed.p99, relayed.errors, (relayed.rps / direct.rps).toFixed(2), relayed.cpu],
      ['B: POST /jobs/version/events (baseline, fetch client)', sseDirect.rps, '', '', sseDirect.errors, '1.00', ''],
      ['A → B: POST /jobs/version/events {target}', sseForwarded.rps, '', '', sseForwarded.errors, (sseForwarded.rps / sseDirect.rps).toFixed(2), ''],
      ['bare node:http GET (baseline)', upstream.rps, upstream.p50, upstream.p99, upstream.errors, '1.00', upstream.cpu],
      ['A: GET /proxy/small/ → bare node', proxied.rps, proxied.p50, proxied.p99, proxied.errors, (proxied.rps / upstream.rps).toFixed(2), proxied.cpu],
    ]);
    const straight = await downloadRate(streaming.url);
    const through = await downloadRate(`${a.url}/proxy/big/`);
    printTable(`Streaming ${STREAM_MIB} MiB, one client (best of 3)`, ['path', 'MiB/s', 'x direct'], [
      ['upstream directly (baseline)', straight, '1.00'],
      ['through /proxy', through, (through / straight).toFixed(2)],
    ]);
  } finally {
    await relay.stop();
    await a.stop();
    await b.stop();
    await bare.stop();
    await streaming.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
