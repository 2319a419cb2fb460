import type { AppCapabilityFactory } from './app-capability.js';
import { createMetricsRoute } from '../protocol/metrics-route.js';
import { watchTaskMetrics } from '../supervisor/metrics/task-metrics.js';
import { taskRuntimeOf } from './tasks-capability.js';

/** Task gauges fed by the task index, and the `/metrics` route. Comes after the tasks capability. */
export const metricsCapability: AppCapabilityFactory = (env) => {
  const stop = watchTaskMetrics(taskRuntimeOf(env), env.metrics);
  return { jobs: [], routes: [createMetricsRoute(env.metrics)], close: async () => void stop() };
};
