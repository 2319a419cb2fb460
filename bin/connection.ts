import { isLoopbackHost } from '../core/loopback.js';
import { resolveWorkspace } from '../schemas/workspace-path.js';
import { runningService } from '../supervisor/common/workspace-lock.js';
import { readToken, tokenFile as tokenFileOf } from '../supervisor/common/token-store.js';
import type { GlobalOptions } from './cli-args.js';
import { UsageError } from './cli-errors.js';

/** Where a Job command sends its request, and with which token. */
export interface Connection {
  url: string;
  token: string | undefined;
  /** Where the token came from and where else it was looked for: told to the user on a 401. */
  tokenHint: string;
  /** Where the address came from, when that helps a user whose service cannot be reached. */
  addressHint?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8420';

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

/** What to tell a user whose token was refused: where it came from, where it is looked for, how to get it. */
function hint(source: string, tokenFile: string | undefined): string {
  const order = tokenFile
    ? `--token, then TASKYARD_TOKEN, then the token file ${tokenFile} (used for a loopback service only)`
    : '--token, then TASKYARD_TOKEN (a token file is read only for a loopback service)';
  return [
    `The token sent came from ${source}. The token is looked for in ${order}.`,
    `Get it on the service's machine with \`cat <workspace>/.taskyard/token\` (default ${tokenFile ?? '~/.taskyard/workspace/.taskyard/token'}),`,
    'or from the console URL `taskyard serve` prints (…/#token=<token>); pass it with --token or TASKYARD_TOKEN.',
  ].join('\n');
}

/**
 * Picks the service and token. `--target` connects straight to that address with `--token` or
 * TASKYARD_TARGET_TOKEN (spec, Authentication 8): the local service's token never goes there.
 * Otherwise `--url`/TASKYARD_URL, else the service running on the workspace, else the default
 * address; with `--token`/TASKYARD_TOKEN, falling back to the workspace's token file only for a
 * loopback service, which is the one that file belongs to.
 */
export async function resolveConnection(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  if (options.target !== undefined) {
    const envToken = env['TASKYARD_TARGET_TOKEN'] || undefined;
    const token = options.token ?? envToken;
    const source = options.token !== undefined ? '--token' : envToken ? 'TASKYARD_TARGET_TOKEN' : 'nowhere (no token was sent)';
    const targetHint = `The token sent came from ${source}. With --target the token is --token or TASKYARD_TARGET_TOKEN: the target's own token (its <workspace>/.taskyard/token), never the local one.`;
    return { url: baseUrl(options.target, '--target'), token, tokenHint: targetHint };
  }
  const given = options.url ?? (env['TASKYARD_URL'] || undefined);
  const found = given === undefined ? await serviceOfWorkspace(resolveWorkspace(options.workspace)) : undefined;
  const url = found?.url ?? baseUrl(given ?? DEFAULT_URL, options.url !== undefined ? '--url' : 'TASKYARD_URL');
  const envToken = env['TASKYARD_TOKEN'] || undefined;
  let token = options.token ?? envToken;
  let source = options.token !== undefined ? '--token' : envToken ? 'TASKYARD_TOKEN' : 'nowhere (no token was sent)';
  let tokenFile: string | undefined;
  if (isLoopbackHost(new URL(url).hostname)) {
    const workspace = resolveWorkspace(options.workspace);
    tokenFile = tokenFileOf(workspace);
    if (token === undefined) {
      token = await readToken(workspace);
      source = token === undefined ? `nowhere (no token was sent: ${tokenFile} does not exist)` : `the token file ${tokenFile}`;
    }
  }
  return { url, token, tokenHint: hint(source, tokenFile), ...(found ? { addressHint: found.hint } : {}) };
}

/**
 * The address of the service running on the workspace (its lock file records it), so a service
 * started on another port is found without --url. A lock left by a stopped service, or one whose
 * pid now belongs to another process, is not used: the default address is tried instead, and
 * the hint says so.
 */
async function serviceOfWorkspace(workspace: string): Promise<{ url: string; hint: string }> {
  const holder = await runningService(workspace);
  if (!holder?.address) return { url: DEFAULT_URL, hint: `the default address: no taskyard service runs on the workspace ${workspace}; start one with \`taskyard serve\`, or pass --url or --workspace` };
  return { url: baseUrl(holder.address, 'the workspace lock'), hint: `the address of the service running on the workspace ${workspace} (pid ${holder.pid}); pass --url to call another` };
}
