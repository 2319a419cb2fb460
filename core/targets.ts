import type { TargetEntry } from '../schemas/config.js';
import { ConfigError } from './errors.js';

/**
 * Normalises a target address to `scheme://host:port` (explicit default port, no credentials,
 * path or query), so `http://Box:80/` and `http://box` name the same target.
 */
export function normalizeAddress(address: string): string {
  let url: URL;
  try {
    url = new URL(address.includes('://') ? address : `http://${address}`);
  } catch {
    throw new Error(`not a valid address: ${JSON.stringify(address)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported scheme ${url.protocol} in ${JSON.stringify(address)} (use http or https)`);
  if (url.username || url.password) throw new Error(`address must not carry credentials: ${JSON.stringify(address)}`);
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) throw new Error(`address must not have a path, query or fragment: ${JSON.stringify(address)}`);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.protocol}//${url.hostname.toLowerCase()}:${port}`;
}

/** The configured targets by normalised address; bad or duplicate entries stop the start. */
export function indexTargets(targets: readonly TargetEntry[]): Map<string, TargetEntry> {
  const map = new Map<string, TargetEntry>();
  targets.forEach((t, i) => {
    let address: string;
    try {
      address = normalizeAddress(t.address);
    } catch (err) {
      throw new ConfigError(`targets.${i}.address: ${(err as Error).message}`);
    }
    if (map.has(address)) throw new ConfigError(`targets.${i}.address: duplicate target ${address}`);
    map.set(address, { ...t, address });
  });
  return map;
}
