import { BlockList } from 'node:net';

/** 127.0.0.0/8 and ::1; BlockList also matches IPv4-mapped forms (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** `[v6]`, `[v6]:port`, `name:port` or `v4:port` without the brackets and port; null if malformed. */
function bareHost(host: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return bracketed[1]!;
  if (host.startsWith('[')) return null;
  // One colon: `name:port`; more: an unbracketed IPv6 address, which has no port.
  const colon = host.indexOf(':');
  if (colon < 0 || colon !== host.lastIndexOf(':')) return host;
  return /^\d+$/.test(host.slice(colon + 1)) ? host.slice(0, colon) : null;
}

/**
 * True when `host` names this machine's loopback interface: `localhost`, any 127.x.y.z, `::1`, or
 * an IPv4-mapped loopback address, bare or as a Host header / URL host (`[::1]:8420`). The one
 * check behind "loopback by default": the service's bind address, the MCP Origin and Host guard,
 * and the CLI's choice to read the local token file.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = bareHost(host)?.toLowerCase();
  if (bare === undefined) return false;
  if (bare === 'localhost') return true;
  // A colon can only be IPv6 here (bareHost took any port off); BlockList answers false for what
  // is not an address of the family. Not net.isIPv6: its first call compiles a large regular
  // expression, ~15 ms of CPU at every service start and CLI call.
  return LOOPBACK.check(bare, bare.includes(':') ? 'ipv6' : 'ipv4');
}
