import type { IncomingRequest, ResponseSink } from '../../protocol/http.js';
import type { Route } from '../../protocol/route.js';
import type { CapabilityFactory } from '../capability.js';
import { HttpError } from '../errors.js';
import { taskRuntimeOf } from '../tasks/capability.js';
import type { ServiceMetrics } from './service-metrics.js';
import { watchTaskMetrics } from './task-metrics.js';

/** `GET /metrics`: the Prometheus text format, under the bearer rule of `/jobs` (front door). */
export function createMetricsRoute(metrics: ServiceMetrics): Route {
  return {
    prefix: '/metrics',
    async handle(req: IncomingRequest, res: ResponseSink): Promise<void> {
      if (req.path !== '/metrics' && req.path !== '/metrics/') throw new HttpError(404, 'Not found');
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'Method not allowed; use GET');
      const { contentType, text } = await metrics.exposition();
      res.send(200, { 'content-type': contentType, 'cache-control': 'no-store' }, text);
    },
  };
}

/** Task gauges fed by the task index, and the `/metrics` route. Comes after the tasks capability. */
export const metricsCapability: CapabilityFactory = (env) => {
  const stop = watchTaskMetrics(taskRuntimeOf(env).index, env.metrics);
  return { jobs: [], routes: [createMetricsRoute(env.metrics)], close: async () => void stop() };
};
