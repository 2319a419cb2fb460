/**
 * Memory follows the work, never the data (issue 26): the service's RSS and `GET /health`
 * latency, idle and then under load, in one run on one service process.
 *
 * 1. Followers of a big log: 20 `stream_task` followers join a Task while its log is empty; the
 *    Task then writes 1 GiB as fast as it can, and the followers trail it, reading as fast as they
 *    can, to its end. Target: RSS growth < 100 MB and /health p99 < 20 ms while they read.
 * 2. Pathological bodies: 4 senders post 16 MiB bodies of `[{},{},…]` (5.6 million values) in a
 *    loop; a single one alone first. Shown: its answer and time, /health p99 beside the idle one,
 *    and the same with a body of one 16 MiB string: what receiving that many bytes costs anyway.
 *
 * /health is timed by one client in a process of its own (bench/lib/health-probe.ts), one request
 * at a time with 5 ms between (a stall shows as one slow answer); BENCH_PROBE=inline times it from
 * this process instead, as the bench first did, where the followers' reading delays each answer too.
 * The followers and senders are raw sockets that count bytes, not parse them.
 * Part 1's floor, in the same run: a bare uWS server doing only a follower's work (read windows,
 * frame them as the service's `log` events, write with backpressure; bench/servers/bare-follow.ts)
 * for as many followers of the same log, written the same way; BENCH_FLOOR=0 leaves it out.
 * BENCH_LOG_MIB (default 1024) and BENCH_FOLLOWERS (default 20) size part 1, BENCH_ROUNDS (default 1)
 * repeats it, every other round in the reverse order, BENCH_SERVICE_NODE_ARGS
 * are node options for its service (a profile: `--cpu-prof --cpu-prof-dir=DIR`); BENCH_BODY_S (default
 * 10) is part 2's window; BENCH_PARTS=followers or bodies runs one part; BENCH_BASELINE_ROOT another build's package root (e.g. the previous
 * commit's) to run too, beside this one. Alone: `node dist/bench/run-all.js memory`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { percentile, RawConnection, rawRequest } from './lib/load.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { placeBenchPlugin } from './lib/bench-plugin.js';

const LOG_MIB = Number(process.env['BENCH_LOG_MIB'] ?? 1024);
const FOLLOWERS = Number(process.env['BENCH_FOLLOWERS'] ?? 20);
const BODY_MS = Number(process.env['BENCH_BODY_S'] ?? 10) * 1000;
const IDLE_MS = 5000;
/** Rounds of part 1, each in the other order (BENCH_ROUNDS, default 1). */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 1);
const SENDERS = 4;
/** Node options for the service process of part 1 (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it). */
const SERVICE_NODE_ARGS = (process.env['BENCH_SERVICE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** Where /health is timed from: a process of its own (default), or `inline` in this one, as before. */
const PROBE = process.env['BENCH_PROBE'] ?? 'process';
const READY = Buffer.from('ready');
const RESULT = Buffer.from('"kind":"result"');
/** Bytes kept from a chunk's end to find a marker cut in two. */
const SEAM = 64;
const auth = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

const PLUGIN = `import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';
export default [defineTask({
  name: 'big-log', taskType: 'bench',
  description: 'Says ready, waits for a file named go in its directory, then writes mib MiB to its log at once.',
  input: { type: 'object', properties: { mib: { type: 'integer' } }, required: ['mib'] },
  output: { type: 'object', properties: {} },
  async run(input) {
    process.stdout.write('ready\\n');
    while (!existsSync('go')) await delay(10);
    const mib = ('y'.repeat(1023) + '\\n').repeat(1024);
    for (let i = 0; i < input.mib; i++) process.stdout.write(mib);
    return {};
  },
})];
`;

/** The Task's writing, for the floor: the same steps, with its stdout on the log file. */
const WRITER = `const { existsSync } = require('node:fs');
(async () => {
  process.stdout.write('ready\\n');
  while (!existsSync('go')) await new Promise((r) => setTimeout(r, 10));
  const mib = ('y'.repeat(1023) + '\\n').repeat(1024);
  for (let i = 0; i < Number(process.argv[1]); i++) process.stdout.write(mib);
})();
`;

async function rssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) / 1024;
}

interface Window {
  p50: number;
  p99: number;
  max: number;
  rssPeak: number;
}

/** The /health timings of one window: from a prober process of its own (bench/lib/health-probe.ts), or this one's. */
async function probeHealth(port: number, end: Promise<unknown>): Promise<number[]> {
  if (PROBE === 'inline') return probeInline(port, end);
  const script = fileURLToPath(new URL('./lib/health-probe.js', import.meta.url));
  const probe = spawn(process.execPath, [script, String(port), BENCH_TOKEN], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  probe.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = once(probe, 'exit');
  while (!out.includes('PROBING\n')) await Promise.race([once(probe.stdout, 'data'), exited]);
  await end.catch(() => {});
  probe.stdin.end();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`the /health prober exited with ${code}: ${out}`);
  return JSON.parse(out.slice(out.indexOf('PROBING\n') + 8)) as number[];
}

/** The prober in this process, as before the prober had its own (BENCH_PROBE=inline, for comparing). */
async function probeInline(port: number, end: Promise<unknown>): Promise<number[]> {
  const conn = await RawConnection.open(port);
  const health = rawRequest('GET', '/health', auth);
  const latencies: number[] = [];
  let over = false;
  end.finally(() => (over = true)).catch(() => {});
  try {
    while (!over) {
      const start = performance.now();
      await conn.request(health);
      latencies.push(performance.now() - start);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    conn.close();
  }
  return latencies;
}

/** Times /health one request at a time and samples RSS until `done` settles (or for `ms`). */
async function watch(svc: ChildServer, done: Promise<unknown> | number): Promise<Window> {
  let rssPeak = 0;
  const end = typeof done === 'number' ? new Promise((r) => setTimeout(r, done)) : done;
  const sampler = setInterval(() => void rssMb(svc.child.pid!).then((mb) => (rssPeak = Math.max(rssPeak, mb))), 100);
  let latencies: number[];
  try {
    latencies = await probeHealth(svc.port, end);
    // A failure (a follower cut off) is thrown here: the caller stops the service and reports it.
    await end;
  } finally {
    clearInterval(sampler);
  }
  rssPeak = Math.max(rssPeak, await rssMb(svc.child.pid!));
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100), rssPeak };
}

/**
 * A `stream_task` follower on a raw socket: resolves `ready` once the log's first line came, and
 * `done` with the bytes received once the terminal result came.
 */
function follower(port: number, taskId: string) {
  const socket = connect(port, '127.0.0.1');
  socket.write(rawRequest('POST', '/jobs/stream_task/events', auth, JSON.stringify({ arguments: { task_id: taskId } })));
  let bytes = 0;
  let seen = false;
  /** The last bytes before this chunk: a marker may straddle two chunks. */
  let carry = Buffer.alloc(0);
  let onReady = () => {};
  let failed = (_err: Error) => {};
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    failed = reject;
  });
  // Searched in the bytes, not in a string made of each chunk: at hundreds of MiB/s that decoding
  // was a CPU's worth of work in this process, taken from the service it measures on 2 cores.
  const has = (chunk: Buffer, marker: Buffer) => chunk.includes(marker) || Buffer.concat([carry, chunk.subarray(0, SEAM)]).includes(marker);
  const done = new Promise<number>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (!seen && has(chunk, READY)) {
        seen = true;
        onReady();
      }
      if (has(chunk, RESULT)) {
        socket.destroy();
        resolve(bytes);
      }
      carry = Buffer.from(chunk.subarray(-SEAM));
    });
    const fail = (err: Error) => {
      failed(err);
      reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error(`follower closed after ${bytes} bytes: ${carry.toString('latin1')}`)));
  });
  // Awaited together later: one follower failing must not end the bench before the service stops.
  done.catch(() => {});
  return { ready, done };
}

async function followBigLog(root: string | undefined): Promise<Array<Array<string | number>>> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-memory-'));
  await placeBenchPlugin(workspace, 'bench-big-log', PLUGIN);
  const svc = await startServiceProcess({ workspace, nodeArgs: SERVICE_NODE_ARGS, ...(root ? { root } : {}) });
  try {
    const idle = await watch(svc, IDLE_MS);
    const conn = await RawConnection.open(svc.port);
    const submit = await conn.request(rawRequest('POST', '/jobs/submit', auth, JSON.stringify({ arguments: { task: 'big-log', mib: LOG_MIB } })));
    conn.close();
    const handle = (JSON.parse(submit.body.toString()) as { answer: { task_id: string } }).answer;
    if (!handle.task_id) throw new Error(`submit failed: ${submit.body.toString()}`);
    const followers = Array.from({ length: FOLLOWERS }, () => follower(svc.port, handle.task_id));
    await Promise.all(followers.map((f) => f.ready));
    const started = performance.now();
    await writeFile(join(svc.workspace, 'bench', handle.task_id, 'go'), '');
    const all = Promise.all(followers.map((f) => f.done));
    const busy = await watch(svc, all);
    const seconds = (performance.now() - started) / 1000;
    const delivered = (await all).reduce((a, b) => a + b, 0) / 1024 / 1024;
    const label = root ? `baseline (${root})` : 'this build';
    return [
      [`${label}: idle`, idle.rssPeak, '', idle.p50, idle.p99, idle.max, ''],
      [`${label}: ${FOLLOWERS} followers of a ${LOG_MIB} MiB log`, busy.rssPeak, busy.rssPeak - idle.rssPeak, busy.p50, busy.p99, busy.max, `${(delivered / seconds).toFixed(0)} MiB/s, ${seconds.toFixed(1)} s`],
    ];
  } finally {
    await svc.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

/**
 * The floor of part 1 in the same run: a bare uWS server (bench/servers/bare-follow.ts) streams
 * the log that a process writing as the Task does makes, to as many followers on the same client.
 */
async function followBigLogFloor(): Promise<Array<Array<string | number>>> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-memory-floor-'));
  const log = join(dir, 'task.log');
  const file = await open(log, 'w');
  const writer = spawn(process.execPath, ['-e', WRITER, String(LOG_MIB)], { cwd: dir, stdio: ['ignore', file.fd, 'inherit'] });
  const script = fileURLToPath(new URL('./servers/bare-follow.js', import.meta.url));
  const server = await startChildServer(script, [log, String(6 + LOG_MIB * 1024 * 1024)]);
  try {
    const idle = await watch(server, IDLE_MS);
    const followers = Array.from({ length: FOLLOWERS }, () => follower(server.port, 'floor'));
    await Promise.all(followers.map((f) => f.ready));
    const started = performance.now();
    await writeFile(join(dir, 'go'), '');
    const all = Promise.all(followers.map((f) => f.done));
    const busy = await watch(server, all);
    const seconds = (performance.now() - started) / 1000;
    const delivered = (await all).reduce((a, b) => a + b, 0) / 1024 / 1024;
    return [
      ['floor (bare uWS, bench/servers/bare-follow.ts): idle', idle.rssPeak, '', idle.p50, idle.p99, idle.max, ''],
      [`floor: ${FOLLOWERS} followers of a ${LOG_MIB} MiB log`, busy.rssPeak, busy.rssPeak - idle.rssPeak, busy.p50, busy.p99, busy.max, `${(delivered / seconds).toFixed(0)} MiB/s, ${seconds.toFixed(1)} s`],
    ];
  } finally {
    if (writer.exitCode === null) {
      writer.kill('SIGKILL');
      await once(writer, 'exit');
    }
    await file.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** `{"arguments":{"items":[{},{},…]}}` just under 16 MiB. */
function floodBody(): string {
  const n = Math.floor((16 * 1024 * 1024 - 64) / 3);
  return `{"arguments":{"items":[${'{},'.repeat(n - 1)}{}]}}`;
}

/** The reference: a body of one 16 MiB string (refused by the schema once parsed), bytes as costly to receive. */
function stringBody(): string {
  return `{"arguments":{"text":"${'x'.repeat(16 * 1024 * 1024 - 64)}"}}`;
}

async function bodies(root: string | undefined, body: string, kind: string): Promise<Array<Array<string | number>>> {
  const svc = await startServiceProcess({ ...(root ? { root } : {}) });
  try {
    const request = rawRequest('POST', '/jobs/version', auth, body);
    const idle = await watch(svc, IDLE_MS);
    const one = await RawConnection.open(svc.port);
    const started = performance.now();
    const answer = await one.request(request);
    const oneMs = performance.now() - started;
    one.close();
    let sent = 0;
    let stop = false;
    // A body refused before it was read whole may end its connection: the sender opens another.
    const senders = Array.from({ length: SENDERS }, async () => {
      while (!stop) {
        const conn = await RawConnection.open(svc.port);
        try {
          while (!stop) {
            await conn.request(request);
            sent++;
          }
        } catch {
          // closed: go on with a new connection
        } finally {
          conn.close();
        }
      }
    });
    const busy = await watch(svc, BODY_MS);
    stop = true;
    await Promise.all(senders);
    const label = `${root ? `baseline (${root})` : 'this build'}, ${kind}`;
    return [
      [`${label}: idle`, idle.rssPeak, '', idle.p50, idle.p99, idle.max, ''],
      [`${label}: one body alone`, '', '', '', '', '', `HTTP ${answer.status} in ${oneMs.toFixed(0)} ms`],
      [`${label}: ${SENDERS} senders`, busy.rssPeak, busy.rssPeak - idle.rssPeak, busy.p50, busy.p99, busy.max, `${sent} bodies in ${BODY_MS / 1000} s`],
    ];
  } finally {
    await svc.stop();
  }
}

export async function run(): Promise<void> {
  const roots = [undefined, ...(process.env['BENCH_BASELINE_ROOT'] ? [process.env['BENCH_BASELINE_ROOT']] : [])];
  const header = ['run', 'RSS MB', 'growth MB', '/health p50 ms', 'p99 ms', 'max ms', 'notes'];
  const parts = (process.env['BENCH_PARTS'] ?? 'followers,bodies').split(',');
  if (parts.includes('followers')) {
    const follow: Array<Array<string | number>> = [];
    // Rounds alternate who goes first: on this VM the first run of a bench process measured up to
    // twice slower than the same build run second, so one order alone says little.
    for (let round = 0; round < ROUNDS; round++) {
      const runs = [...roots.map((root) => () => followBigLog(root)), ...(process.env['BENCH_FLOOR'] !== '0' ? [followBigLogFloor] : [])];
      if (round % 2 === 1) runs.reverse();
      for (const run of runs) follow.push(...(await run()));
    }
    printTable(`${FOLLOWERS} stream_task followers trailing a ${LOG_MIB} MiB log (target: growth < 100 MB, /health p99 < 20 ms)`, header, follow);
  }
  if (parts.includes('bodies')) {
    const body: Array<Array<string | number>> = [];
    for (const root of roots) body.push(...(await bodies(root, floodBody(), '[{},{},…]')));
    body.push(...(await bodies(undefined, stringBody(), 'one string (reference)')));
    printTable(`${SENDERS} senders of 16 MiB bodies (POST /jobs/version), ${BODY_MS / 1000} s; the string body: what receiving 16 MiB costs`, header, body);
  }
}

if (isMain(import.meta.url)) await run();
