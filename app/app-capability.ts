import type { JobRegistry } from '../core/registry.js';
import type { Route } from '../protocol/route.js';
import type { Capability, DeclaredCapability, Environment } from './capability-contract.js';

/** A capability as the composition root sees it: Jobs from the actors, plus any HTTP routes. */
export interface AppCapability extends Capability {
  readonly routes?: readonly Route[];
  /** Told the finished registry, for capabilities that call other Jobs (the agent's tools). */
  attach?(registry: JobRegistry): void;
}

export type AppCapabilityFactory = (env: Environment) => AppCapability | Promise<AppCapability>;

/** One entry of the service's list: a plain factory, or a capability that declares its needs. */
export type AppCapabilityEntry = AppCapabilityFactory | DeclaredCapability<AppCapability>;
