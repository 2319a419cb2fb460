import t from 'tap';
import type { TaskState, TaskStatus } from '../../schemas/tasks.js';
import { ServiceMetrics } from '../../supervisor/metrics/service-metrics.js';
import { watchTaskMetrics } from '../../supervisor/metrics/task-metrics.js';
import { parseTaskId } from '../../supervisor/tasks/records/task-ids.js';
import { TaskIndex } from '../../supervisor/tasks/records/task-index.js';

const CREATED = '2026-01-01T00:00:00.000Z';

function status(id: string, state: TaskState, run = 'r1', startedAt: string | null = null): TaskStatus {
  return { task_id: id, run_id: run, task_type: 'base', task_name: 'demo', config: {}, state, pid: null, created_at: CREATED, started_at: startedAt, finished_at: null, steps: [], result: {}, error: '', exit_code: 0, log_path: '' };
}

function put(index: TaskIndex, id: string, st: TaskStatus): void {
  index.setStatus(id, parseTaskId(id)!, st);
}

async function gauges(metrics: ServiceMetrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const { labels, value } of (await metrics.tasks.get()).values) out[String(labels['state'])] = value;
  out['queue'] = (await metrics.queueLength.get()).values[0]?.value ?? -1;
  out['running_gauge'] = (await metrics.runsInFlight.get()).values[0]?.value ?? -1;
  return out;
}

async function spawns(metrics: ServiceMetrics): Promise<{ count: number; sum: number }> {
  const values = (await metrics.spawnSeconds.get()).values;
  return { count: values.find((v) => v.metricName === 'taskyard_task_spawn_seconds_count')?.value ?? 0, sum: values.find((v) => v.metricName === 'taskyard_task_spawn_seconds_sum')?.value ?? 0 };
}

t.test('Task gauges: seeded from the index, moved by each change, a removed record uncounted', async (t) => {
  const index = new TaskIndex('/nonexistent');
  put(index, 'base#demo#a', status('base#demo#a', 'succeeded'));
  put(index, 'base#demo#b', status('base#demo#b', 'running', 'r1', '2026-01-01T00:00:01.000Z'));
  const metrics = new ServiceMetrics();
  const stop = watchTaskMetrics(index, metrics);
  t.teardown(stop);
  t.same(await gauges(metrics), { queued: 0, running: 1, succeeded: 1, failed: 0, cancelled: 0, queue: 0, running_gauge: 1 }, 'the records present at start');
  t.same(await spawns(metrics), { count: 0, sum: 0 }, 'a run already running at start is not a spawn seen');

  put(index, 'base#demo#c', status('base#demo#c', 'queued'));
  put(index, 'base#demo#c', status('base#demo#c', 'queued'));
  t.same(await gauges(metrics), { queued: 1, running: 1, succeeded: 1, failed: 0, cancelled: 0, queue: 1, running_gauge: 1 }, 'the same state twice counts once');
  put(index, 'base#demo#c', status('base#demo#c', 'running', 'r1', '2026-01-01T00:00:00.250Z'));
  t.same(await spawns(metrics), { count: 1, sum: 0.25 }, 'queued to running: started_at - created_at');
  put(index, 'base#demo#c', status('base#demo#c', 'failed', 'r1', '2026-01-01T00:00:00.250Z'));
  put(index, 'base#demo#b', status('base#demo#b', 'cancelled'));
  t.same(await gauges(metrics), { queued: 0, running: 0, succeeded: 1, failed: 1, cancelled: 1, queue: 0, running_gauge: 0 });

  // A fixed name reused: the finished record becomes a new queued run.
  put(index, 'base#demo#c', status('base#demo#c', 'queued', 'r2'));
  t.same(await gauges(metrics), { queued: 1, running: 0, succeeded: 1, failed: 0, cancelled: 1, queue: 1, running_gauge: 0 });
  index.remove('base#demo#c');
  index.remove('base#demo#a');
  index.remove('base#demo#missing');
  t.same(await gauges(metrics), { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 1, queue: 0, running_gauge: 0 }, 'removed records leave the counts');
  stop();
  put(index, 'base#demo#d', status('base#demo#d', 'queued'));
  t.equal((await gauges(metrics))['queued'], 0, 'stopped: no longer watching');
});
