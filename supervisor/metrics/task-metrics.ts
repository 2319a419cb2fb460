import { TaskState } from '../../schemas/tasks.js';
import type { TaskIndex } from '../tasks/task-index.js';
import type { ServiceMetrics } from './service-metrics.js';

const STATES: readonly TaskState[] = Object.values(TaskState);

/**
 * Keeps the Task gauges true as the index changes: a map of each Task's last state, and counts
 * per state moved by one on each change. A scrape then costs O(states), whatever the number of
 * records. Returns the way to stop.
 */
export function watchTaskMetrics(index: TaskIndex, metrics: ServiceMetrics): () => void {
  const stateOf = new Map<string, TaskState>();
  const counts = new Map<TaskState, number>(STATES.map((s) => [s, 0]));
  const move = (state: TaskState | undefined, by: number) => {
    if (state === undefined) return;
    const count = (counts.get(state) ?? 0) + by;
    counts.set(state, count);
    metrics.tasks.set({ state }, count);
    if (state === 'queued') metrics.queueLength.set(count);
    if (state === 'running') metrics.runsInFlight.set(count);
  };
  for (const state of STATES) move(state, 0);
  for (const record of index.all()) {
    if (record.state === undefined) continue;
    stateOf.set(record.id, record.state);
    move(record.state, 1);
  }
  return index.events.on('task:status', ({ id, status }) => {
    const before = stateOf.get(id);
    const after = status?.state;
    if (before === after) return;
    move(before, -1);
    move(after, 1);
    if (after === undefined) stateOf.delete(id);
    else stateOf.set(id, after);
    // A new or queued run seen running: the time its runner took to start.
    if ((before === undefined || before === 'queued') && after === 'running' && status?.started_at && status.created_at) {
      const seconds = (Date.parse(status.started_at) - Date.parse(status.created_at)) / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) metrics.spawnSeconds.observe(seconds);
    }
  });
}
