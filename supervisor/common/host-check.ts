import { lazyBuiltin } from '../../core/lazy-builtin.js';
import { isIP, type LookupFunction } from 'node:net';

/** Only webhooks resolve names here: the module loads with the first lookup. */
const dns = lazyBuiltin<typeof import('node:dns')>('node:dns');

/**
 * Where webhooks may go (no SSRF through a configured URL): loopback hosts always; any other host
 * only when `webhook_hosts` lists it. The name is checked at config load, and its address again at
 * connect time: the socket connects to the address checked here, never to a second lookup.
 */

/** A class of address: a name must resolve into the class its configuration allows. */
export type AddressClass = 'loopback' | 'private' | 'link-local' | 'unspecified' | 'public';

/** The class of an IPv4 or IPv6 literal (IPv4-mapped IPv6 as its IPv4). */
export function classOf(address: string): AddressClass {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return classOf(mapped[1]!);
  if (isIP(address) === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    if (a === 127) return 'loopback';
    if (a === 0) return 'unspecified';
    if (a === 169 && b === 254) return 'link-local';
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'private';
    return 'public';
  }
  const lower = address.toLowerCase();
  if (lower === '::1') return 'loopback';
  if (lower === '::') return 'unspecified';
  if (/^fe[89ab]/.test(lower)) return 'link-local';
  if (/^f[cd]/.test(lower)) return 'private';
  return 'public';
}

const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();

/** Names that mean this machine. */
const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * The class an endpoint's host must resolve into: a loopback name or address: loopback; a listed
 * IP literal: its own class; a listed name: public (a listed name that now resolves to this machine
 * or the private network is refused). Null: the host is not allowed.
 */
export function allowedClassOf(host: string, listed: readonly string[]): AddressClass | null {
  const h = bare(host);
  if (isLoopbackName(h)) return 'loopback';
  if (isIP(h)) {
    const cls = classOf(h);
    if (cls === 'loopback') return cls;
    return listed.some((l) => bare(l) === h) ? cls : null;
  }
  return listed.some((l) => bare(l) === h) ? 'public' : null;
}

/** Checks every `webhooks[].url` against `webhook_hosts`; returns the problems, each naming the fix. */
export function webhookUrlProblems(webhooks: ReadonlyArray<{ url: string }>, listed: readonly string[]): string[] {
  const problems: string[] = [];
  webhooks.forEach(({ url }, n) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      problems.push(`webhooks.${n}.url: not a valid URL`);
      return;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push(`webhooks.${n}.url: only http:// and https:// URLs are sent to`);
    else if (allowedClassOf(parsed.hostname, listed) === null) {
      problems.push(`webhooks.${n}.url: host ${parsed.hostname} is not loopback; add it to the top-level webhook_hosts list to allow webhooks to it`);
    }
  });
  return problems;
}

/**
 * A `lookup` for http.request that resolves `host` and hands the socket only addresses of the
 * allowed class, refusing the connection when the name resolves only elsewhere (a DNS rebind, a
 * changed record). The request then connects to exactly the checked address.
 */
export function checkedLookup(allowed: AddressClass): LookupFunction {
  return (hostname, options, callback) => {
    dns().lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const ok = addresses.filter((a) => classOf(a.address) === allowed);
      if (!ok.length) {
        const found = addresses.map((a) => `${a.address} (${classOf(a.address)})`).join(', ');
        return callback(Object.assign(new Error(`${hostname} resolves to ${found}, not a ${allowed} address: refused`), { code: 'EWEBHOOKHOST' }), '', 0);
      }
      // Node 20 asks for every address (`all`) to try both families in turn: only checked ones.
      if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, ok);
      else callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
}
