/**
 * Task runs against a bench service: sequential submit latency and sustained Tasks/s from
 * concurrent clients, each with the CPU the service, the spawner and the runners spent; and the
 * floor they are compared with, a bare spawn loop of the same command. Used by bench/tasks.ts and
 * bench/command-tasks.ts.
 */
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { childPids, processCpu } from '../../harness/process-cpu.js';
import { percentile, RawConnection } from './load.js';
import { jobCall, type ServiceProcess } from './service-process.js';

/** The arguments of the i-th submit (`task` and its inputs). */
export type SubmitArgs = (i: number) => Record<string, unknown>;

interface Handle {
  task_id: string;
  run_id: string;
}

/** What wait_task answers, as far as the benches read it. */
interface Finished {
  state: string;
  started_at: string;
  finished_at: string | null;
}

export const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
};

/** CPU milliseconds per Task: the service, the spawner, and the task runners (with their commands) it reaped. */
export interface CpuPerTask {
  service: number;
  spawner: number;
  runners: number;
}

export interface Latency {
  /** Submit sent → the runner's started_at, ms. */
  running: number[];
  /** The runner's started_at → its finished_at (the run itself, as the record says), ms. */
  run: number[];
  /** Submit sent → wait_task answered `succeeded`, ms. */
  succeeded: number[];
  failed: number;
}

/**
 * `count` sequential submits (after 3 untimed), each waited, on one raw keep-alive connection (as
 * a script or agent that keeps one open sends: fetch spent ~0.7 ms of its own before the request
 * left, which no service can cut). Times are from the moment the client sends the submit.
 */
export async function submitLatency(svc: ServiceProcess, args: SubmitArgs, count: number): Promise<Latency> {
  const out: Latency = { running: [], run: [], succeeded: [], failed: 0 };
  const conn = await RawConnection.open(svc.port);
  try {
    for (let i = 0; i < count + 3; i++) {
      const start = Date.now();
      const handle = (await jobCall<Handle>(conn, 'submit', args(i))).answer;
      const done = (await jobCall<Finished>(conn, 'wait_task', { task_id: handle.task_id, run_id: handle.run_id })).answer;
      if (i < 3) continue; // warm-up
      if (done.state !== 'succeeded') out.failed++;
      out.succeeded.push(Date.now() - start);
      out.running.push(Date.parse(done.started_at) - start);
      if (done.finished_at) out.run.push(Date.parse(done.finished_at) - Date.parse(done.started_at));
    }
  } finally {
    conn.close();
  }
  return out;
}

export interface Throughput {
  perSecond: number;
  succeeded: number;
  /** submit → running (the runner's started_at) of every Task, ms. */
  running: number[];
  cpu: CpuPerTask;
}

/**
 * `total` submits from `clients` concurrent clients, each submitting then waiting for its Task:
 * sustained Tasks/s, submit → running of every Task, and the CPU spent per Task. The clients are
 * raw keep-alive connections: fetch would spend ~3 ms of this machine's CPU per Task, CPU the
 * Tasks themselves need.
 */
export async function throughput(svc: ServiceProcess, args: SubmitArgs, total: number, clients: number): Promise<Throughput> {
  const connections = await Promise.all(Array.from({ length: clients }, () => RawConnection.open(svc.port)));
  // One run first: the spawner (which starts, and reaps, the runners) is up from then on.
  const first = (await jobCall<Handle>(connections[0]!, 'submit', args(0))).answer;
  await jobCall(connections[0]!, 'wait_task', { task_id: first.task_id, run_id: first.run_id });
  const spawner = (await childPids(svc.child.pid!))[0]!;
  const before = { service: await processCpu(svc.child.pid!), spawner: await processCpu(spawner), runners: await runnersCpu(spawner) };
  let next = 0;
  let succeeded = 0;
  const running: number[] = [];
  const start = performance.now();
  await Promise.all(
    connections.map(async (conn) => {
      while (next < total) {
        next++;
        const submitted = Date.now();
        const handle = (await jobCall<Handle>(conn, 'submit', args(next))).answer;
        const done = await jobCall<Finished>(conn, 'wait_task', { task_id: handle.task_id, run_id: handle.run_id });
        if (done.success && done.answer.state === 'succeeded') succeeded++;
        running.push(Date.parse(done.answer.started_at) - submitted);
      }
    }),
  );
  const perSecond = (total / (performance.now() - start)) * 1000;
  // The runners' CPU shows on the spawner once it has reaped them: wait for the last ones' exits.
  await delay(500);
  const after = { service: await processCpu(svc.child.pid!), spawner: await processCpu(spawner), runners: await runnersCpu(spawner) };
  const perTask = (seconds: number) => (1000 * seconds) / total;
  const cpu = { service: perTask(after.service.self - before.service.self), spawner: perTask(after.spawner.self - before.spawner.self), runners: perTask(after.runners - before.runners) };
  for (const conn of connections) conn.close();
  return { perSecond, succeeded, running, cpu };
}

/**
 * CPU seconds of the task runners so far: those the spawner reaped, and those alive (a runner
 * that serves more than one command run is reaped late), each with the commands it reaped.
 */
async function runnersCpu(spawner: number): Promise<number> {
  let seconds = (await processCpu(spawner)).reaped;
  for (const pid of await childPids(spawner)) {
    const cpu = await processCpu(pid).catch(() => ({ self: 0, reaped: 0 }));
    seconds += cpu.self + cpu.reaped;
  }
  return seconds;
}

/**
 * The floor of one process per Task: `clients` loops spawning `argv` (detached, as runners are:
 * each in a session, and scheduler autogroup, of its own) and waiting for its exit, `total` in
 * all. Answers the rate, the wall time of each spawn to its exit, and the CPU ms of one process.
 */
export async function spawnLoop(argv: readonly string[], total: number, clients: number, env: NodeJS.ProcessEnv = process.env): Promise<{ perSecond: number; times: number[]; cpuMs: number }> {
  let next = 0;
  const times: number[] = [];
  const before = (await processCpu('self')).reaped;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < total) {
        const t0 = performance.now();
        await new Promise((resolve, reject) => spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', env, detached: true }).once('exit', resolve).once('error', reject));
        times.push(performance.now() - t0);
      }
    }),
  );
  const perSecond = (total / (performance.now() - start)) * 1000;
  const cpuMs = (1000 * ((await processCpu('self')).reaped - before)) / total;
  return { perSecond, times, cpuMs };
}
