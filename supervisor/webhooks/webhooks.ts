import { join } from 'node:path';
import { Counter, Gauge } from '../../vendor/prom-client.js';
import type { TaskStatus } from '../../schemas/tasks.js';
import type { WebhookEndpointStatus, WebhookEntry, WebhookEventType } from '../../schemas/webhooks.js';
import { STATE_DIR } from '../common/token-store.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { TaskEvents } from '../tasks/records/task-events.js';
import { parseTaskId } from '../tasks/records/task-ids.js';
import { envelopeOf } from './envelope.js';
import { WebhookEndpoint, type DeliveryObserver } from './endpoint.js';

const ENDED: Partial<Record<TaskStatus['state'], WebhookEventType>> = { succeeded: 'task.succeeded', failed: 'task.failed', cancelled: 'task.cancelled' };

/** The Prometheus side of every endpoint, registered in the service's registry. */
function metricsOf(metrics: ServiceMetrics): DeliveryObserver {
  const registers = [metrics.registry];
  const delivered = new Counter({ name: 'taskyard_webhook_deliveries_total', help: 'Webhook deliveries acknowledged with a 2xx', registers });
  const failed = new Counter({ name: 'taskyard_webhook_failed_attempts_total', help: 'Webhook attempts that failed (refused, timed out, non-2xx); each is retried until given up', registers });
  const givenUp = new Counter({ name: 'taskyard_webhook_given_up_total', help: 'Webhook deliveries given up after every attempt failed', registers });
  const pending = new Gauge({ name: 'taskyard_webhook_pending', help: 'Webhook deliveries on disk waiting for a 2xx', registers });
  return { delivered: () => delivered.inc(), failedAttempt: () => failed.inc(), givenUp: () => givenUp.inc(), pendingChanged: (by) => pending.inc(by) };
}

/**
 * Webhooks of one service: listens to the final Task events (`task:ended`, `task:retrying`:
 * never `task:status`, which also fires for records read at a start) and hands each subscribed
 * endpoint an envelope. The listener only enqueues; the sending happens off the Task paths.
 */
export class Webhooks {
  readonly #endpoints: WebhookEndpoint[];
  readonly #abort = new AbortController();
  #unsubscribe: Array<() => void> = [];

  constructor(entries: readonly WebhookEntry[], hosts: readonly string[], workspace: string, metrics: ServiceMetrics) {
    const observer = metricsOf(metrics);
    const stateDir = join(workspace, STATE_DIR);
    this.#endpoints = entries.map((entry) => new WebhookEndpoint(entry, hosts, stateDir, this.#abort.signal, observer));
  }

  async start(events: TaskEvents): Promise<void> {
    for (const endpoint of this.#endpoints) await endpoint.start();
    // Replayed: runs the start settled (found dead, adopted ones that ended) ended before this existed.
    this.#unsubscribe = [
      events.on(
        'task:ended',
        ({ id, status }) => {
          const type = ENDED[status.state];
          if (type) this.#publish(type, { registration: parseTaskId(id)?.registration ?? null, status });
        },
        { replay: true },
      ),
      events.on(
        'task:retrying',
        ({ id, failed, next_run_id, attempt, cause, delay_s }) => {
          this.#publish('task.retrying', { registration: parseTaskId(id)?.registration ?? null, status: failed, next_run_id, attempt, cause, delay_s });
        },
        { replay: true },
      ),
    ];
    events.release();
  }

  status(): WebhookEndpointStatus[] {
    return this.#endpoints.map((e) => e.status());
  }

  /** Stops sending: attempts under way are aborted and stay on disk for the next start. */
  stop(): void {
    for (const off of this.#unsubscribe) off();
    this.#abort.abort();
    for (const endpoint of this.#endpoints) endpoint.stop();
  }

  #publish(type: WebhookEventType, data: Record<string, unknown>): void {
    const wanting = this.#endpoints.filter((e) => e.wants(type));
    if (wanting.length === 0) return;
    const envelope = envelopeOf(type, data);
    for (const endpoint of wanting) {
      endpoint.enqueue(envelope).catch((err: unknown) => console.error(`taskyard: webhook outbox: cannot keep ${envelope.id}`, err));
    }
  }
}
