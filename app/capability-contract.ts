import type { Config } from '../supervisor/common/config.js';
import type { Job } from '../core/job.js';
import type { WorkerPool } from '../workers/pool.js';
import type { ServiceMetrics } from '../supervisor/metrics/service-metrics.js';
import type { RunAs } from '../supervisor/common/run-as.js';
import type { Tasks } from '../supervisor/tasks/tasks.js';
import type { Composable } from './compose-capabilities.js';

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
 * What capabilities hand each other, by name: one capability provides each, the others declare
 * that they need it (or use it when present) and are given it, built before them.
 */
export interface Services {
  /** The Tasks facade (the tasks capability). */
  readonly tasks: Tasks;
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

/** A capability that needs no service and provides none. */
export type CapabilityFactory = (env: Environment) => Capability | Promise<Capability>;

/** A capability with declared needs, as the composition root builds it (made by `declareCapability`). */
export type DeclaredCapability<C extends Capability = Capability> = Composable<Environment, Services, C>;

/** What `build` is given: every needed service, and each used one when some capability provides it. */
export type Given<N extends keyof Services, U extends keyof Services> = Pick<Services, N> & Partial<Pick<Services, U>>;

/** `build`'s answer: the capability, with the services it declared it provides. */
export type Built<C extends Capability, P extends keyof Services> = C & ([P] extends [never] ? { readonly provided?: never } : { readonly provided: Pick<Services, P> });

/** The declaration of a capability, typed: `build` receives exactly what `needs` and `uses` name. */
export interface CapabilityDeclaration<C extends Capability, N extends keyof Services, U extends keyof Services, P extends keyof Services> {
  /** Named in composition errors. */
  readonly name: string;
  /** Services it cannot be built without. */
  readonly needs?: readonly N[];
  /** Services it takes when present (built before it) and does without otherwise. */
  readonly uses?: readonly U[];
  readonly provides?: readonly P[];
  build(env: Environment, given: Given<N, U>): Built<C, P> | Promise<Built<C, P>>;
}

/**
 * Declares a capability with what it needs, uses and provides; the composition root builds the
 * providers first, whatever the order of the list (which only fixes the catalog's order).
 */
export function declareCapability<C extends Capability, const N extends keyof Services = never, const U extends keyof Services = never, const P extends keyof Services = never>(
  declaration: CapabilityDeclaration<C, N, U, P>,
): DeclaredCapability<C> {
  const { name, needs = [], uses = [], provides = [] } = declaration;
  return {
    name,
    needs,
    uses,
    provides,
    // The typed `given` is what the composition root collected for `needs` and `uses`: it checks both.
    build: async (env, given) => {
      const capability = await declaration.build(env, given as Given<N, U>);
      return { capability, provided: capability.provided ?? {} };
    },
  };
}
