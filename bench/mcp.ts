/**
 * MCP, three measurements in one run:
 * 1. Call cost: MCP `tools/call status` against HTTP JSON `POST /jobs/status` at concurrency 1
 *    and 32 (target: MCP p50 and throughput within 1.3x of HTTP JSON at both).
 * 2. Progress delivery: 100 concurrent MCP `stream_task` callers with a progress token; the time
 *    from the Task's log write (its log line's timestamp) to each notification (target p99 < 50 ms).
 * 3. Acceptance of issue 12: the official SDK client with a 60 s request timeout and
 *    `resetTimeoutOnProgress` waits through `wait_task` for a 150 s Task and gets its terminal
 *    TaskStatus (set BENCH_MCP_ACCEPTANCE=0 to skip these 150 s).
 * `node dist/bench/mcp.js cost|latency|acceptance` runs one of them. Call cost: BENCH_DURATION_MS
 * per run (3000), BENCH_MCP_ROUNDS alternating rounds (3), BENCH_BASELINE_ROOT another build's
 * package root (with its dist/) measured in the same rounds.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownCpuSeconds, processCpuSeconds } from '../harness/process-cpu.js';
import { rawRequest, runLoad, percentile, type LoadResult } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_MCP_ROUNDS'] ?? 3);
const FOLLOWERS = Number(process.env['BENCH_MCP_FOLLOWERS'] ?? 100);
const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const JSON_TYPE = { 'content-type': 'application/json' };

interface Handle {
  task_id: string;
  run_id: string;
}

async function submit(svc: ServiceProcess, args: Record<string, unknown>): Promise<Handle> {
  const res = await fetch(`${svc.url}/jobs/submit`, { method: 'POST', headers: { ...auth, ...JSON_TYPE }, body: JSON.stringify({ arguments: args }) });
  const body = (await res.json()) as { answer: Handle; success: boolean };
  if (!body.success) throw new Error(`submit failed: ${JSON.stringify(body)}`);
  return { task_id: body.answer.task_id, run_id: body.answer.run_id };
}

async function connect(svc: ServiceProcess): Promise<Client> {
  const client = new Client({ name: 'taskyard-bench', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', svc.url), { requestInit: { headers: auth } }));
  return client;
}

/** A check that an answer's body ends as a success does: the lean client reads no more of it than that. */
function endsWith(tail: string): (body: Buffer) => boolean {
  const bytes = Buffer.from(tail);
  return (body) => body.length >= bytes.length && body.subarray(body.length - bytes.length).equals(bytes);
}

type Measured = LoadResult & { serviceUs: number; clientUs: number };

/**
 * One load run and the CPU it cost per answered call: the service's (from /proc) and this
 * client's, which shares the machine's cores with it, so a heavier answer to read slows both.
 */
async function measuredLoad(svc: ServiceProcess, request: Buffer, ok: (body: Buffer) => boolean, connections: number): Promise<Measured> {
  const pid = svc.child.pid!;
  const [service0, client0] = [await processCpuSeconds(pid), ownCpuSeconds()];
  const result = await runLoad({ port: svc.port, request, ok, connections, durationMs: DURATION_MS, warmupMs: 500 });
  const [service1, client1] = [await processCpuSeconds(pid), ownCpuSeconds()];
  const perCall = (seconds: number) => (seconds * 1e6) / result.answered;
  return { ...result, serviceUs: perCall(service1 - service0), clientUs: perCall(client1 - client0) };
}

/** The median of each figure over rounds (errors: their sum). */
function medianOf(runs: Measured[]): Measured {
  const median = (pick: (m: Measured) => number) => runs.map(pick).sort((a, b) => a - b)[runs.length >> 1]!;
  return {
    requests: median((m) => m.requests),
    answered: median((m) => m.answered),
    rps: median((m) => m.rps),
    p50: median((m) => m.p50),
    p99: median((m) => m.p99),
    errors: runs.reduce((sum, m) => sum + m.errors, 0),
    serviceUs: median((m) => m.serviceUs),
    clientUs: median((m) => m.clientUs),
  };
}

/** A build's service with one finished Task, and its two requests for that Task's status. */
async function costTarget(root?: string) {
  const svc = await startServiceProcess({ adapter: 'uws', ...(root ? { root } : {}) });
  const { task_id } = await submit(svc, { task: 'sleep', seconds: 0 });
  const http = rawRequest('POST', '/jobs/status', { ...auth, ...JSON_TYPE }, JSON.stringify({ arguments: { task_id } }));
  const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'status', arguments: { task_id } } });
  const mcp = rawRequest('POST', '/mcp', { ...auth, ...JSON_TYPE, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }, mcpBody);
  return { svc, http, mcp };
}

/**
 * MCP `tools/call status` against HTTP JSON `status`, the two alternating for ROUNDS rounds (the
 * medians are shown: on a shared machine one run says little), at concurrency 1 and 32; with
 * BENCH_BASELINE_ROOT, another build's service is measured the same way, in the same rounds.
 */
async function callCost(): Promise<void> {
  const baselineRoot = process.env['BENCH_BASELINE_ROOT'];
  const targets = [{ label: '', ...(await costTarget()) }];
  if (baselineRoot) targets.push({ label: 'baseline ', ...(await costTarget(baselineRoot)) });
  // Each answer is checked to be a success, the same cheap way on both paths: the JobResponse
  // ends with its success and (empty) metadata; the tool result ends with isError.
  const httpOk = endsWith('"success":true,"metadata":{}}');
  const mcpOk = endsWith('"isError":false}}');
  const rows: Array<Array<string | number>> = [];
  try {
    for (const connections of [1, 32]) {
      const runs = targets.map(() => ({ http: [] as Measured[], mcp: [] as Measured[] }));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, target] of targets.entries()) {
          runs[i]!.http.push(await measuredLoad(target.svc, target.http, httpOk, connections));
          runs[i]!.mcp.push(await measuredLoad(target.svc, target.mcp, mcpOk, connections));
        }
      }
      for (const [i, { label }] of targets.entries()) {
        const [h, m] = [medianOf(runs[i]!.http), medianOf(runs[i]!.mcp)];
        const cpu = (us: number) => us.toFixed(1);
        // Three decimals: at concurrency 1 a call takes tens of microseconds.
        const ms = (value: number) => value.toFixed(3);
        // Service and client share the cores: their CPU per call together bounds the throughput.
        const cpuRatio = (m.serviceUs + m.clientUs) / (h.serviceUs + h.clientUs);
        rows.push([`${label}HTTP JSON status, ${connections}`, h.rps, ms(h.p50), ms(h.p99), h.errors, cpu(h.serviceUs), cpu(h.clientUs), '1.00', '1.00', '1.00']);
        rows.push([`${label}MCP tools/call status, ${connections}`, m.rps, ms(m.p50), ms(m.p99), m.errors, cpu(m.serviceUs), cpu(m.clientUs), (m.p50 / h.p50).toFixed(2), (h.rps / m.rps).toFixed(2), cpuRatio.toFixed(2)]);
      }
    }
    printTable(`MCP call cost against HTTP JSON (uws; medians of ${ROUNDS} alternating rounds of ${DURATION_MS / 1000} s; target <= 1.3x)`, ['call, concurrency', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'service CPU us/call', 'client CPU us/call', 'p50 x HTTP', 'HTTP/MCP req/s', 'CPU/call x HTTP'], rows);
  } finally {
    await Promise.all(targets.map((target) => target.svc.stop()));
  }
}

/** The Task log's `<ISO time> INFO step i/N` lines by their text, with the time each was written. */
async function logTimes(svc: ServiceProcess, taskId: string): Promise<Map<string, number>> {
  const text = await readFile(join(svc.workspace, 'base', taskId, 'task.log'), 'utf8');
  const times = new Map<string, number>();
  for (const m of text.matchAll(/^(\S+Z) INFO (step \d+\/\d+)$/gm)) times.set(m[2]!, Date.parse(m[1]!));
  return times;
}

async function progressLatency(): Promise<void> {
  const svc = await startServiceProcess({ adapter: 'uws' });
  const clients: Client[] = [];
  try {
    for (let i = 0; i < FOLLOWERS; i++) clients.push(await connect(svc));
    const steps = 40;
    const handle = await submit(svc, { task: 'sleep', seconds: 8, steps });
    // Per caller, the first notification naming each line: later ones repeat it with a new percentage.
    const seen = clients.map(() => new Map<string, number>());
    await Promise.all(
      clients.map((client, i) =>
        client.callTool({ name: 'stream_task', arguments: { task_id: handle.task_id } }, undefined, {
          timeout: 120_000,
          onprogress: (p) => {
            const line = /step \d+\/\d+$/.exec(p.message ?? '')?.[0];
            if (line && !seen[i]!.has(line)) seen[i]!.set(line, Date.now());
          },
        }),
      ),
    );
    const written = await logTimes(svc, handle.task_id);
    const delays = seen.flatMap((lines) => [...lines].map(([line, at]) => at - written.get(line)!)).sort((a, b) => a - b);
    printTable(`Progress delivery, ${FOLLOWERS} concurrent MCP stream_task callers, ${steps} log lines (target p99 < 50 ms)`, ['notifications', 'p50 ms', 'p99 ms', 'max ms'], [
      [delays.length, percentile(delays, 50), percentile(delays, 99), delays.at(-1) ?? NaN],
    ]);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await svc.stop();
  }
}

async function acceptance(): Promise<void> {
  const svc = await startServiceProcess({ adapter: 'uws' });
  try {
    const client = await connect(svc);
    const handle = await submit(svc, { task: 'sleep', seconds: 150 });
    const started = Date.now();
    let notes = 0;
    let outcome: string;
    try {
      const result = await client.callTool({ name: 'wait_task', arguments: { ...handle } }, undefined, { timeout: 60_000, resetTimeoutOnProgress: true, onprogress: () => notes++ });
      const state = (result.structuredContent as { answer: { state: string } }).answer.state;
      outcome = state === 'succeeded' ? 'PASS' : `FAIL (state ${state})`;
    } catch (err) {
      outcome = `FAIL (${(err as Error).message})`;
    }
    await client.close();
    printTable('Issue 12 acceptance: SDK client, 60 s request timeout, resetTimeoutOnProgress, wait_task on a 150 s Task', ['outcome', 'seconds', 'progress notifications'], [
      [outcome, ((Date.now() - started) / 1000).toFixed(1), notes],
    ]);
  } finally {
    await svc.stop();
  }
}

export async function run(): Promise<void> {
  await callCost();
  await progressLatency();
  if (process.env['BENCH_MCP_ACCEPTANCE'] !== '0') await acceptance();
}

if (isMain(import.meta.url)) {
  const only = process.argv[2];
  if (only === 'cost') await callCost();
  else if (only === 'latency') await progressLatency();
  else if (only === 'acceptance') await acceptance();
  else await run();
}
