import type { JobRegistry } from '../core/registry.js';
import type { Route } from '../protocol/route.js';
import type { Capability, Environment } from './capability-contract.js';

/** A capability as the composition root sees it: Jobs from the actors, plus any HTTP routes. */
export interface AppCapability extends Capability {
  readonly routes?: readonly Route[];
  /** Told the finished registry, for capabilities that call other Jobs (the agent's tools). */
  attach?(registry: JobRegistry): void;
}

export type AppCapabilityFactory = (env: Environment) => AppCapability | Promise<AppCapability>;
