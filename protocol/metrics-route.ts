import type { IncomingRequest, ResponseSink } from './http.js';
import type { Route } from './route.js';
import { HttpError } from '../core/errors.js';

/** What the route serves: the Prometheus text exposition. */
export interface MetricsSource {
  exposition(): Promise<{ contentType: string; text: string }>;
}

/** `GET /metrics`: the Prometheus text format, under the bearer rule of `/jobs` (front door). */
export function createMetricsRoute(metrics: MetricsSource): Route {
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
