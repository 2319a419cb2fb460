/**
 * Scoped tokens (issue 29): the cost of 20 configured scoped tokens beside one token, in one run.
 * Three services' worth of calls alternate for BENCH_SCOPES_ROUNDS rounds (3) of BENCH_DURATION_MS
 * (2000) each, at concurrency 1 and 16: HTTP JSON `status` and MCP `tools/call version`, with
 *   - one token: `--token` only (the service before this issue, as to tokens),
 *   - 20 scoped: the same service token on a service that also has 20 scoped tokens,
 *   - scoped caller: the last of those 20 scoped tokens itself (its scope: status, version).
 * Target: no measurable cost (ratios within the noise of the one-token rows between rounds).
 * Besides req/s (which a shared machine swings widely), the service's CPU per answered call, from
 * /proc. A second table times the token lookup itself in this process (TokenScopes.identify with
 * 1 and 21 tokens, beside the single-token check of the previous release, auth.ts makeBearerCheck).
 * The audit log is written in all three (it comes with every call).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest, runLoad, type LoadResult } from './lib/load.js';
import { processCpuSeconds } from '../harness/process-cpu.js';
import { makeBearerCheck } from '../protocol/auth.js';
import { TokenScopes } from '../protocol/token-scopes.js';
import { JobRegistry } from '../core/registry.js';
import { defineJob } from '../core/job.js';
import { Type } from '@sinclair/typebox';
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

type Measured = LoadResult & { cpuUs: number };
const median = (runs: Measured[], pick: (r: Measured) => number) => runs.map(pick).sort((a, b) => a - b)[runs.length >> 1]!;

/** One load run and the service's CPU per answered call (µs). */
async function measured(svc: ServiceProcess, request: Buffer, connections: number): Promise<Measured> {
  const before = await processCpuSeconds(svc.child.pid!);
  const result = await runLoad({ port: svc.port, request, connections, durationMs: DURATION_MS, warmupMs: 300 });
  return { ...result, cpuUs: (((await processCpuSeconds(svc.child.pid!)) - before) * 1e6) / result.answered };
}

/** ns per lookup of a presented bearer header, best of 5 runs of 200,000. */
function lookupNs(check: (headers: Record<string, string>) => unknown, token: string): number {
  const headers = { authorization: `Bearer ${token}` };
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 200_000; i++) check(headers);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 200_000);
  }
  return best;
}

function lookupTable(): void {
  const job = defineJob({ name: 'version', description: 'v', input: Type.Object({}), output: Type.String(), run: async () => ({ answer: '', success: true, metadata: {} }) });
  const registry = new JobRegistry([job], {}, true);
  const one = new TokenScopes(registry, BENCH_TOKEN, []);
  const many = new TokenScopes(registry, BENCH_TOKEN, Array.from({ length: SCOPED }, (_, i) => ({ name: `agent-${i}`, token: scopedToken(i), jobs: ['version'] })));
  const previous = makeBearerCheck(BENCH_TOKEN);
  const rows = [
    ['previous release: makeBearerCheck, service token', lookupNs(previous, BENCH_TOKEN)],
    ['TokenScopes, 1 token, service token', lookupNs((h) => one.identify(h), BENCH_TOKEN)],
    [`TokenScopes, ${SCOPED + 1} tokens, service token`, lookupNs((h) => many.identify(h), BENCH_TOKEN)],
    [`TokenScopes, ${SCOPED + 1} tokens, last scoped token`, lookupNs((h) => many.identify(h), scopedToken(SCOPED - 1))],
    [`TokenScopes, ${SCOPED + 1} tokens, unknown token`, lookupNs((h) => many.identify(h), 'no-such-token-0123456789')],
  ] as const;
  printTable('Token lookup per request (this process, best of 5 x 200,000)', ['check', 'ns/lookup', 'x previous'], rows.map(([label, ns]) => [label, ns.toFixed(0), (ns / rows[0][1]).toFixed(2)]));
}

export async function run(): Promise<void> {
  lookupTable();
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
        const runs = variants.map(() => [] as Measured[]);
        for (let round = 0; round < ROUNDS; round++) {
          for (const [i, v] of variants.entries()) runs[i]!.push(await measured(v.svc, requests(v, tasks.get(v.svc)!)[call], connections));
        }
        const [baseRps, baseCpu] = [median(runs[0]!, (r) => r.rps), median(runs[0]!, (r) => r.cpuUs)];
        const spread = (rs: Measured[], pick: (r: Measured) => number, digits: number) => `${Math.min(...rs.map(pick)).toFixed(digits)}-${Math.max(...rs.map(pick)).toFixed(digits)}`;
        for (const [i, v] of variants.entries()) {
          const rs = runs[i]!;
          const [rps, cpu] = [median(rs, (r) => r.rps), median(rs, (r) => r.cpuUs)];
          rows.push([
            `${call === 'status' ? 'HTTP JSON status' : 'MCP tools/call version'}, ${v.label}, ${connections}`,
            Math.round(rps),
            spread(rs, (r) => r.rps, 0),
            median(rs, (r) => r.p50).toFixed(3),
            rs.reduce((s, r) => s + r.errors, 0),
            cpu.toFixed(1),
            spread(rs, (r) => r.cpuUs, 1),
            (rps / baseRps).toFixed(2),
            (cpu / baseCpu).toFixed(2),
          ]);
        }
      }
    }
    printTable(`Scoped tokens: ${SCOPED} scoped tokens beside one token (uws; medians of ${ROUNDS} alternating rounds of ${DURATION_MS / 1000} s; target: ratio within noise)`, ['call, tokens, concurrency', 'req/s', 'req/s range', 'p50 ms', 'errors', 'service CPU us/call', 'CPU range', 'req/s x one', 'CPU/call x one'], rows);
  } finally {
    await Promise.all([one.stop(), twenty.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
