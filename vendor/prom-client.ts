/**
 * The Prometheus client behind `/metrics` (supervisor/metrics/service-metrics.ts). Bundled into one
 * file by the build (vendor/bundle.mjs), like vendor/typebox.ts: with the OpenTelemetry API it
 * requires, ~90 CommonJS files, ~60 ms of CPU more to load one by one at every service start.
 * Built by tsc alone it is a plain re-export.
 */
export { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
