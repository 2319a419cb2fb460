import type { Config } from '../supervisor/common/config.js';
import type { Job } from '../core/job.js';
import type { WorkerPool } from '../workers/pool.js';
import type { ServiceMetrics } from '../supervisor/metrics/service-metrics.js';
import type { RunAs } from '../supervisor/common/run-as.js';

/** What every capability may use: built once per service process. */
export interface Environment {
  readonly config: Config;
  /** Absolute, real path of the workspace root (created at start). */
  readonly workspace: string;
  /** Thread pool for previews and shell. */
  readonly pool: WorkerPool;
  /** Aborted when the service shuts down. */
  readonly shutdown: AbortSignal;
  /** The service's bearer token (null or absent: an open service); never to be sent anywhere. */
  readonly token?: string | null;
  /** The service's Prometheus metrics, for whoever counts something. */
  readonly metrics: ServiceMetrics;
  /** Whom Task code and shell commands run as (`service.run_as`); null or absent: the service's user. */
  readonly runAs?: RunAs | null;
}

/**
 * One group of behaviour (machine, workspace, tasks, fleet ...): the Jobs it contributes, and how
 * to stop it. The service is the sum of its capabilities (HTTP routes are added at the top, in
 * `app/`, so the actors never depend on the HTTP layer).
 */
export interface Capability {
  readonly jobs: readonly Job[];
  close?(): Promise<void>;
}

export type CapabilityFactory = (env: Environment) => Capability | Promise<Capability>;
