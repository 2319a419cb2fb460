import { resolveWorkspace } from '../schemas/workspace-path.js';
import { readToken } from '../supervisor/token-store.js';
import type { GlobalOptions } from './cli-args.js';
import { UsageError } from './cli-errors.js';

/** Where a Job command sends its request, and with which token. */
export interface Connection {
  url: string;
  token: string | undefined;
}

export const DEFAULT_URL = 'http://127.0.0.1:8420';

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** Accepts `host:port` or a full http(s) URL; the result has no trailing slash. */
function baseUrl(address: string, option: string): string {
  let url: URL;
  try {
    url = new URL(address.includes('://') ? address : `http://${address}`);
  } catch {
    throw new UsageError(`${option}: not a valid address: ${JSON.stringify(address)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${option}: use an http or https address, got ${JSON.stringify(address)}`);
  return url.href.replace(/\/+$/, '');
}


/**
 * Picks the service and token. `--target` connects straight to that address with `--token` or
 * TASKYARD_TARGET_TOKEN (spec, Authentication 8): the local service's token never goes there.
 * Otherwise `--url`/TASKYARD_URL with `--token`/TASKYARD_TOKEN, falling back to the workspace's
 * token file only for a loopback service, which is the one that file belongs to.
 */
export async function resolveConnection(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  if (options.target !== undefined) {
    return { url: baseUrl(options.target, '--target'), token: options.token ?? (env['TASKYARD_TARGET_TOKEN'] || undefined) };
  }
  const url = baseUrl(options.url ?? (env['TASKYARD_URL'] || DEFAULT_URL), options.url !== undefined ? '--url' : 'TASKYARD_URL');
  let token = options.token ?? (env['TASKYARD_TOKEN'] || undefined);
  if (token === undefined && LOOPBACK_HOST.test(new URL(url).hostname)) {
    token = await readToken(resolveWorkspace(options.workspace));
  }
  return { url, token };
}
