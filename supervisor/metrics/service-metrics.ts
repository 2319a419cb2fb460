import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from '../../vendor/prom-client.js';
import type { JobCallObserver } from '../../core/registry.js';

/** Seconds: a Job call ranges from a cached query (~0.1 ms) to a wait of minutes. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds from submit to its runner running: a bare node start is ~50 ms here, a queue adds more. */
const SPAWN_BUCKETS = [0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2, 5, 10, 30, 60];

/**
 * The metrics of one service, in a registry of its own (several services may share a process,
 * as the tests do). Everything is counted where it happens; a scrape only formats.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly jobCalls = new Counter({ name: 'taskyard_job_calls_total', help: 'Job calls by Job name, transport (http, sse, mcp) and outcome (success, failure, no_result)', labelNames: ['job', 'transport', 'outcome'] as const, registers: [this.registry] });
  readonly jobSeconds = new Histogram({ name: 'taskyard_job_call_duration_seconds', help: 'Job call latency from validated arguments to answer', labelNames: ['job', 'transport', 'outcome'] as const, buckets: CALL_BUCKETS, registers: [this.registry] });
  /** SSE and MCP callers still waiting on a Job (followers of a stream_task, a wait_task ...). */
  readonly jobsInFlight = new Gauge({ name: 'taskyard_job_calls_in_flight', help: 'Job calls under way by Job name and transport (sse and mcp ones are the followers)', labelNames: ['job', 'transport'] as const, registers: [this.registry] });
  readonly tasks = new Gauge({ name: 'taskyard_tasks', help: 'Task records by state', labelNames: ['state'] as const, registers: [this.registry] });
  readonly queueLength = new Gauge({ name: 'taskyard_task_queue_length', help: 'Tasks queued and not yet running', registers: [this.registry] });
  readonly runsInFlight = new Gauge({ name: 'taskyard_task_runs_in_flight', help: 'Tasks running now', registers: [this.registry] });
  readonly spawnSeconds = new Histogram({ name: 'taskyard_task_spawn_seconds', help: 'Time from a Task record created to its runner running (started_at - created_at)', buckets: SPAWN_BUCKETS, registers: [this.registry] });
  readonly uploadBytes = new Counter({ name: 'taskyard_upload_bytes_total', help: 'Bytes received by POST /files', registers: [this.registry] });
  readonly downloadBytes = new Counter({ name: 'taskyard_download_bytes_total', help: 'Bytes sent by GET /files', registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The registry's hook: counts, times and tracks each Job call. */
  readonly observeJobCall: JobCallObserver = (job, transport) => {
    const started = process.hrtime.bigint();
    this.jobsInFlight.inc({ job, transport });
    return (outcome) => {
      this.jobsInFlight.dec({ job, transport });
      this.jobCalls.inc({ job, transport, outcome });
      this.jobSeconds.observe({ job, transport, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    };
  };

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
