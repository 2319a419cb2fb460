import { TaskState } from '../../schemas/tasks.js';
import type { TaskIndex } from '../tasks/records/task-index.js';
import type { ServiceMetrics } from './service-metrics.js';

const STATES: readonly TaskState[] = Object.values(TaskState);

/**
 * Keeps the Task gauges true as the index changes: counts per state moved by one on each change
 * (from the state the index held before it). A scrape then costs O(states), whatever the number of
 * records. Returns the way to stop.
 */
export function watchTaskMetrics(index: Pick<TaskIndex, 'all' | 'events'>, metrics: ServiceMetrics): () => void {
  const counts = new Map<TaskState, number>(STATES.map((s) => [s, 0]));
  const move = (state: TaskState | undefined, by: number) => {
    if (state === undefined) return;
    const count = (counts.get(state) ?? 0) + by;
    counts.set(state, count);
    metrics.tasks.set({ state }, count);
    if (state === 'queued') metrics.queueLength.set(count);
    if (state === 'running') metrics.runsInFlight.set(count);
  };
  // Counted first, set once per state (not once per record of a long history).
  for (const record of index.all()) if (record.state !== undefined) counts.set(record.state, counts.get(record.state)! + 1);
  for (const state of STATES) move(state, 0);
  return index.events.on('task:status', ({ status, previous: before }) => {
    const after = status?.state;
    if (before === after) return;
    move(before, -1);
    move(after, 1);
    // A new or queued run seen running: the time its runner took to start.
    if ((before === undefined || before === 'queued') && after === 'running' && status?.started_at && status.created_at) {
      const seconds = (Date.parse(status.started_at) - Date.parse(status.created_at)) / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) metrics.spawnSeconds.observe(seconds);
    }
  });
}
