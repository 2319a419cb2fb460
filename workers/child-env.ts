/** Variables that hold the service's own credentials: no child process may inherit them. */
export const PRIVATE_ENV_VARIABLES: readonly string[] = Object.freeze(['TASKYARD_TOKEN']);

/**
 * The environment for a child process that runs code the service does not own (`shell`
 * commands, probes): the service's environment without its credentials. `serve` also drops
 * them from `process.env` once read; this covers a service started from a library call.
 */
export function childEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const name of PRIVATE_ENV_VARIABLES) delete env[name];
  return env;
}
