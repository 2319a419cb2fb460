/**
 * Result cache (issue 31): submit → succeeded of a cache hit beside a run of the same Task (the
 * built-in `demo` with `tasks.demo.cache: true`; the run is the same submit with `no_cache: true`),
 * and the floor, two Job calls (`version` twice: the least a hit's submit and wait_task can cost),
 * all in one run on one service. Sequential, each waited, on one keep-alive connection.
 * `RESULT_CACHE_N=50` (timed submits per variant, after 3 untimed).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RawConnection } from './lib/load.js';
import { jobCall, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { stats } from './lib/task-load.js';
import type { TaskHandle, TaskStatus } from '../schemas/tasks.js';

/** `count` timed rounds of `round` (after 3 untimed): milliseconds each. */
async function timed(count: number, round: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count + 3; i++) {
    const start = performance.now();
    await round();
    if (i >= 3) times.push(performance.now() - start);
  }
  return times;
}

export async function run(): Promise<void> {
  const count = Number(process.env['RESULT_CACHE_N'] ?? 50);
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-cache-'));
  const config = join(dir, 'config.yaml');
  await writeFile(config, 'tasks:\n  demo:\n    cache: true\n');
  const svc = await startServiceProcess({ args: ['--config', config] });
  try {
    const conn = await RawConnection.open(svc.port);
    let hits = 0;
    /** Submit → wait_task answered succeeded; counts the answers that came from the cache. */
    const submitToSucceeded = async (args: Record<string, unknown>) => {
      const handle = (await jobCall<TaskHandle>(conn, 'submit', { task: 'demo', x: 2, y: 3, ...args })).answer;
      const done = await jobCall<TaskStatus>(conn, 'wait_task', { task_id: handle.task_id, run_id: handle.run_id });
      if (done.answer.state !== 'succeeded') throw new Error(`demo ended ${done.answer.state}`);
      if (done.answer.pid === null) hits++;
    };
    const ran = stats(await timed(count, () => submitToSucceeded({ no_cache: true })));
    hits = 0;
    const hit = stats(await timed(count, () => submitToSucceeded({})));
    const hitCount = hits;
    const floor = stats(await timed(count, async () => void (await jobCall(conn, 'version', {}), await jobCall(conn, 'version', {}))));
    conn.close();
    printTable(`result cache: submit → succeeded of demo (x=2, y=3), ${count} sequential each, ms (${hitCount} of ${count + 3} answered without a process)`, ['variant', 'p50', 'p95', 'p99', 'run p50 / this p50'], [
      ['a run (no_cache: true)', ran.p50, ran.p95, ran.p99, 1],
      ['a cache hit', hit.p50, hit.p95, hit.p99, ran.p50 / hit.p50],
      ['floor: two Job calls (version, version)', floor.p50, floor.p95, floor.p99, ran.p50 / floor.p50],
    ]);
  } finally {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
