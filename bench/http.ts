/**
 * Front-end throughput: requests/s and p99 at 100 connections for `GET /health` and
 * `POST /jobs/version`, next to a bare uWS hello-world (the floor) and bare node:http; then the
 * round-trip latency of MCP `tools/call version` next to the HTTP JSON call.
 * Target: version >= 50 % of the bare uWS rate; MCP within 1.5x of HTTP JSON.
 */
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { rawRequest, runLoad, percentile, type LoadResult } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const CONNECTIONS = 100;
const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const HEALTH = rawRequest('GET', '/health', auth);
const VERSION = rawRequest('POST', '/jobs/version', { ...auth, 'content-type': 'application/json' }, '{"arguments":{}}');

async function measure(server: ChildServer, request: Buffer): Promise<LoadResult> {
  return runLoad({ port: server.port, request, connections: CONNECTIONS, durationMs: DURATION_MS });
}

async function throughput(): Promise<void> {
  const rows: Array<[string, LoadResult]> = [];
  const bench = join(PACKAGE_ROOT, 'dist', 'bench', 'servers');
  const bareUws = await startChildServer(join(bench, 'bare-uws.js'));
  rows.push(['bare uWS hello-world GET (floor)', await measure(bareUws, HEALTH)]);
  rows.push(['bare uWS hello-world, same POST', await measure(bareUws, VERSION)]);
  await bareUws.stop();
  const bareNode = await startChildServer(join(bench, 'bare-node.js'));
  rows.push(['bare node:http hello-world GET', await measure(bareNode, HEALTH)]);
  rows.push(['bare node:http hello-world, same POST', await measure(bareNode, VERSION)]);
  await bareNode.stop();
  for (const adapter of ['uws', 'node'] as const) {
    const svc = await startServiceProcess({ adapter });
    rows.push([`taskyard (${adapter}) GET /health`, await measure(svc, HEALTH)]);
    rows.push([`taskyard (${adapter}) POST /jobs/version`, await measure(svc, VERSION)]);
    await svc.stop();
  }
  // Each request is compared with the bare uWS server answering the same request bytes.
  const floorGet = rows[0]![1].rps;
  const floorPost = rows[1]![1].rps;
  printTable(
    `HTTP throughput, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s each`,
    ['server / request', 'req/s', 'p50 ms', 'p99 ms', 'errors', '% of bare uWS (same request)'],
    rows.map(([name, r]) => [name, r.rps, r.p50, r.p99, r.errors, `${((100 * r.rps) / (/POST/.test(name) ? floorPost : floorGet)).toFixed(0)} %`]),
  );
}

async function sequentialLatency(call: () => Promise<void>, count: number): Promise<{ p50: number; p99: number; mean: number }> {
  for (let i = 0; i < 50; i++) await call();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

async function mcpLatency(): Promise<void> {
  const svc = await startServiceProcess({ adapter: 'uws' });
  try {
    const headers = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const json = await sequentialLatency(async () => {
      const res = await fetch(`${svc.url}/jobs/version`, { method: 'POST', headers, body: '{"arguments":{}}' });
      if (!((await res.json()) as { success: boolean }).success) throw new Error('version failed');
    }, 1000);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'version', arguments: {} } });
    const mcp = await sequentialLatency(async () => {
      const res = await fetch(`${svc.url}/mcp`, { method: 'POST', headers, body });
      const parsed = (await res.json()) as { result?: { isError: boolean } };
      if (parsed.result?.isError !== false) throw new Error('tools/call failed');
    }, 1000);
    printTable('Round trip, one client, sequential calls (fetch)', ['call', 'p50 ms', 'p99 ms', 'mean ms', 'x HTTP JSON (mean)'], [
      ['POST /jobs/version', json.p50, json.p99, json.mean, '1.00'],
      ['MCP tools/call version', mcp.p50, mcp.p99, mcp.mean, (mcp.mean / json.mean).toFixed(2)],
    ]);
  } finally {
    await svc.stop();
  }
}

export async function run(): Promise<void> {
  await throughput();
  await mcpLatency();
}

if (isMain(import.meta.url)) await run();
