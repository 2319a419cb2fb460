/**
 * Scoped tokens (issue 29): the cost of 20 configured scoped tokens beside one token, in one run.
 * Three services' worth of calls alternate for BENCH_SCOPES_ROUNDS rounds (3) of BENCH_DURATION_MS
 * (2000) each, at concurrency 1 and 16: HTTP JSON `status` and MCP `tools/call version`, with
 *   - one token: `--token` only (the service before this issue, as to tokens),
 *   - 20 scoped: the same service token on a service that also has 20 scoped tokens,
 *   - scoped caller: the last of those 20 scoped tokens itself (its scope: status, version).
 * Target: no measurable cost (ratios within the noise of the one-token rows between rounds).
 * The audit log is written in all three (it comes with every call).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest, runLoad, type LoadResult } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_SCOPES_ROUNDS'] ?? 3);
const SCOPED = 20;
const scopedToken = (i: number) => `scoped-bench-token-${String(i).padStart(4, '0')}-abcdefghijklmnop`;
const JSON_TYPE = { 'content-type': 'application/json' };
const MCP_HEADERS = { ...JSON_TYPE, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** One Task to ask the status of (the same on every service: a finished sleep of 0 s). */
async function finishedTask(svc: ServiceProcess): Promise<string> {
  const res = await fetch(`${svc.url}/jobs/submit`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...JSON_TYPE }, body: JSON.stringify({ arguments: { task: 'sleep', seconds: 0 } }) });
  const { answer } = (await res.json()) as { answer: { task_id: string; run_id: string } };
  await fetch(`${svc.url}/jobs/wait_task`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...JSON_TYPE }, body: JSON.stringify({ arguments: answer }) });
  return answer.task_id;
}

interface Variant {
  label: string;
  svc: ServiceProcess;
  token: string;
}

function requests(v: Variant, taskId: string): { status: Buffer; version: Buffer } {
  const auth = { authorization: `Bearer ${v.token}` };
  return {
    status: rawRequest('POST', '/jobs/status', { ...auth, ...JSON_TYPE }, JSON.stringify({ arguments: { task_id: taskId } })),
    version: rawRequest('POST', '/mcp', { ...auth, ...MCP_HEADERS }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'version', arguments: {} } })),
  };
}

const median = (runs: LoadResult[], pick: (r: LoadResult) => number) => runs.map(pick).sort((a, b) => a - b)[runs.length >> 1]!;

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-scopes-'));
  const config = join(dir, 'config.yaml');
  const tokens = Array.from({ length: SCOPED }, (_, i) => ({ name: `agent-${i}`, token: scopedToken(i), jobs: ['status', 'version'] }));
  await writeFile(config, JSON.stringify({ service: { tokens } }));
  const one = await startServiceProcess({ adapter: 'uws' });
  const twenty = await startServiceProcess({ adapter: 'uws', args: ['--config', config] });
  try {
    const variants: Variant[] = [
      { label: 'one token', svc: one, token: BENCH_TOKEN },
      { label: `${SCOPED} scoped, service token`, svc: twenty, token: BENCH_TOKEN },
      { label: `${SCOPED} scoped, scoped caller`, svc: twenty, token: scopedToken(SCOPED - 1) },
    ];
    const tasks = new Map([[one, await finishedTask(one)], [twenty, await finishedTask(twenty)]]);
    const rows: Array<Array<string | number>> = [];
    for (const connections of [1, 16]) {
      for (const call of ['status', 'version'] as const) {
        const runs = variants.map(() => [] as LoadResult[]);
        for (let round = 0; round < ROUNDS; round++) {
          for (const [i, v] of variants.entries()) {
            const request = requests(v, tasks.get(v.svc)!)[call];
            const result = await runLoad({ port: v.svc.port, request, connections, durationMs: DURATION_MS, warmupMs: 300 });
            runs[i]!.push(result);
          }
        }
        const base = median(runs[0]!, (r) => r.rps);
        const spread = (rs: LoadResult[]) => `${Math.round(Math.min(...rs.map((r) => r.rps)))}-${Math.round(Math.max(...rs.map((r) => r.rps)))}`;
        for (const [i, v] of variants.entries()) {
          const rs = runs[i]!;
          const rps = median(rs, (r) => r.rps);
          rows.push([`${call === 'status' ? 'HTTP JSON status' : 'MCP tools/call version'}, ${v.label}, ${connections}`, Math.round(rps), spread(rs), median(rs, (r) => r.p50).toFixed(3), median(rs, (r) => r.p99).toFixed(3), rs.reduce((s, r) => s + r.errors, 0), (rps / base).toFixed(2)]);
        }
      }
    }
    printTable(`Scoped tokens: ${SCOPED} scoped tokens beside one token (uws; medians of ${ROUNDS} alternating rounds of ${DURATION_MS / 1000} s; target: ratio within noise)`, ['call, tokens, concurrency', 'req/s', 'req/s range', 'p50 ms', 'p99 ms', 'errors', 'req/s x one token'], rows);
  } finally {
    await Promise.all([one.stop(), twenty.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
