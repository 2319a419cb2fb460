import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A built-in module loaded the first time it is asked for, synchronously. For what only some
 * services use (TLS to a target, webhooks over http(s), a DNS lookup, the node:http front end):
 * loading node:http, https, tls and dns costs a process ~30 ms of CPU, paid at every start (each
 * `taskyard serve`, each test process) when imported at the top of a module.
 */
export function lazyBuiltin<T>(name: `node:${string}`): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
