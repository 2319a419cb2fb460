import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/**
 * Headers that describe one connection rather than the message (RFC 9110 §7.6.1), plus `host`
 * (set from the upstream URL) and `expect` (the client library handles 100-continue itself).
 * A proxy must not forward them; `upgrade` going too means WebSocket upgrades are not proxied.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
]);

/** The names a `Connection` header lists are hop-by-hop for that message too. */
function listedInConnection(value: string | string[] | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

/**
 * Copies end-to-end headers only. `drop` may veto further headers (e.g. an Authorization that
 * carries this service's own token, which must never reach an upstream).
 */
export function endToEndHeaders(headers: IncomingHttpHeaders | Readonly<Record<string, string>>, drop: (name: string, value: string | string[]) => boolean = () => false): OutgoingHttpHeaders & Record<string, string | string[]> {
  const listed = listedInConnection(headers['connection']);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || drop(name, value)) continue;
    out[name] = value;
  }
  return out;
}
