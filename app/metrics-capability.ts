import type { AppCapability } from './app-capability.js';
import { declareCapability } from './capability-contract.js';
import { createMetricsRoute } from '../protocol/metrics-route.js';
import { watchTaskMetrics } from '../supervisor/metrics/task-metrics.js';

/** Task gauges fed by the Tasks' record changes, and the `/metrics` route. */
export const metricsCapability = declareCapability({
  name: 'metrics',
  needs: ['tasks'],
  build: (env, { tasks }): AppCapability => {
    const stop = watchTaskMetrics(tasks, env.metrics);
    return { jobs: [], routes: [createMetricsRoute(env.metrics)], close: async () => void stop() };
  },
});
