import { createProxyRoute } from '../protocol/proxy-route.js';
import type { AppCapabilityFactory } from './app-capability.js';
import { ConfigError } from '../core/errors.js';

/** Checks `proxy.<name>.url` once at start: an absolute http(s) URL without credentials, query or fragment. */
export function parseUpstreams(proxy: Readonly<Record<string, { url: string }>>): Map<string, URL> {
  const upstreams = new Map<string, URL>();
  for (const [name, { url }] of Object.entries(proxy)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`proxy.${name}.url: not an absolute URL: ${JSON.stringify(url)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`proxy.${name}.url: unsupported scheme ${parsed.protocol} (use http or https)`);
    // Credentials in the URL would be sent instead of the caller's own (spec, Authentication 3).
    if (parsed.username || parsed.password) throw new ConfigError(`proxy.${name}.url: must not carry credentials`);
    if (parsed.search || parsed.hash) throw new ConfigError(`proxy.${name}.url: must not have a query or fragment`);
    upstreams.set(name, parsed);
  }
  return upstreams;
}

/** The upstream proxy at `/proxy/{name}/{path}`: a route, no Jobs. */
export const proxyCapability: AppCapabilityFactory = (env) => ({
  jobs: [],
  routes: [createProxyRoute({ upstreams: parseUpstreams(env.config.proxy), token: env.token ?? null, shutdown: env.shutdown })],
});
