import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { RawConnection, rawRequest } from './load.js';

export const BENCH_TOKEN = 'bench-token';
const JOB_HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

/** A Job call on a raw keep-alive connection to a bench service: its JobResponse, and its size in bytes. */
export async function jobCall<T>(conn: RawConnection, name: string, args: Record<string, unknown>): Promise<{ answer: T; success: boolean; bytes: number }> {
  const res = await conn.request(rawRequest('POST', `/jobs/${name}`, JOB_HEADERS, JSON.stringify({ arguments: args })));
  return { ...(JSON.parse(res.body.toString('utf8')) as { answer: T; success: boolean }), bytes: res.body.length };
}

export interface ServiceProcess extends ChildServer {
  url: string;
  workspace: string;
}

/** Runs `taskyard serve` (of `root`, default this package) in its own process on a fresh workspace (removed on stop). */
export async function startServiceProcess(opts: { adapter?: 'uws' | 'node'; workspace?: string; args?: string[]; root?: string; nodeArgs?: string[] } = {}): Promise<ServiceProcess> {
  const workspace = opts.workspace ?? (await mkdtemp(join(tmpdir(), 'taskyard-bench-')));
  const server = await startChildServer(
    join(opts.root ?? PACKAGE_ROOT, 'dist', 'bin', 'cli.js'),
    ['serve', '--port', '0', '--workspace', workspace, '--token', BENCH_TOKEN, ...(opts.args ?? [])],
    { TASKYARD_HTTP_ADAPTER: opts.adapter ?? 'uws' },
    opts.nodeArgs,
  );
  return {
    ...server,
    url: `http://127.0.0.1:${server.port}`,
    workspace,
    stop: async () => {
      await server.stop();
      if (!opts.workspace) await rm(workspace, { recursive: true, force: true });
    },
  };
}
