import type { ValidateFunction } from '../vendor/ajv.js';

/** A validator generated at build time from one schema, by ajv's standalone code. */
export interface PrecompiledValidator {
  /** The schema it was generated from, as JSON: a schema with other text compiles at first use. */
  readonly schema: string;
  /** Generated with `useDefaults` (the filling instance of schemas/validator.ts) or without. */
  readonly defaults: boolean;
  readonly validate: ValidateFunction;
}

/**
 * The validators of the schemas every service start (the configuration) and nearly every first
 * call (the request envelope, a Task's status record, the inputs of the most called Jobs and of
 * the built-in Tasks) compile: ajv's first compile in a process
 * costs ~90 ms of CPU and the configuration's ~130 ms more, paid by each `taskyard serve`, CLI
 * command that reads a config and test process. `schemas/precompile.mjs` (run by `npm run build`
 * after tsc) overwrites this module's compiled file with the generated code, ajv's runtime
 * helpers included; built by tsc alone it holds none, and every schema compiles at first use.
 * They are matched by their JSON text, so a schema edited since the build is compiled anew.
 */
export const PRECOMPILED: readonly PrecompiledValidator[] = [];
