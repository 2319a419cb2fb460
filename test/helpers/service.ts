import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { validateConfig } from '../../supervisor/common/config.js';
import { startService, type RunningService, type ServiceOptions } from '../../app/service.js';
import { testsFrontEnd } from './front-end.js';
import type { CalledName, ReplyOf } from './jobs-client.js';
import { reportLeak } from './leak-check.js';
import { killTaskProcesses, liveTaskProcesses } from './task-processes.js';

export { waitFor } from './wait-for.js';

export const TEST_TOKEN = 'test-token-0123456789';


export interface TestService extends RunningService {
  readonly token: string | null;
  /** `fetch` against the service with the bearer token (unless headers override it). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * `POST /jobs/{name}` with `{arguments}`; returns the status and parsed body. Over a socket in a
   * file that tests the front end, through the routes in process otherwise (`callsOverSockets`).
   */
  call<N extends CalledName>(name: N, args?: Record<string, unknown>, extra?: Record<string, unknown>): Promise<{ status: number; body: ReplyOf<N> }>;
  /**
   * `POST /jobs/{name}/events`; returns every parsed event in order, and the last one as `result`,
   * its answer typed like `call`'s, when it is the result event.
   */
  events<N extends CalledName>(name: N, args?: Record<string, unknown>): Promise<{ status: number; events: Array<Record<string, unknown>>; raw: string; result: ReplyOf<N> | undefined }>;
}

export interface TestServiceOptions {
  /** Raw configuration sections (validated like a config file); `service.workspace` is filled in. */
  config?: Record<string, unknown>;
  /** Bearer token; `null` for an open service. Default TEST_TOKEN. */
  token?: string | null;
  capabilities?: ServiceOptions['capabilities'];
  /** Use this workspace instead of a fresh temporary one (kept after the test). */
  workspace?: string;
}

/**
 * `call` and `events` go over a real socket only in a test file that tests the HTTP front end
 * (test/helpers/front-end.ts); elsewhere they run the same front door and routes in process, where
 * a socket adds nothing but time. `fetch` is always a real HTTP request.
 */
export const callsOverSockets = testsFrontEnd(process.argv[1] ?? '');

/** Parses an SSE body into its data objects, checking the `event:` line equals `data.kind`. */
export function parseSse(raw: string): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  for (const block of raw.split('\n\n')) {
    if (!block.trim()) continue;
    const lines = block.split('\n');
    const kind = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
    if (data === undefined) throw new Error(`SSE block without data: ${JSON.stringify(block)}`);
    const parsed = JSON.parse(data) as Record<string, unknown>;
    if (parsed['kind'] !== kind) throw new Error(`event line ${kind} differs from data.kind ${String(parsed['kind'])}`);
    events.push(parsed);
  }
  return events;
}

/**
 * Starts the real service in this process on a free loopback port with a temporary workspace,
 * and tears it down (workspace included) when the test ends.
 */
export async function startTestService(t: Test, opts: TestServiceOptions = {}): Promise<TestService> {
  const workspace = opts.workspace ?? (await mkdtemp(join(tmpdir(), 'taskyard-test-')));
  const raw = opts.config ?? {};
  // Unless the test asks otherwise: one runner started ahead of need, not the default two (a test
  // service submits a few Tasks at a time, and every idle runner is a Node start, ~60 ms of CPU,
  // thrown away at close); and no GPUs, so each start does not run nvidia-smi and rocm-smi to
  // find none (tests that lease GPUs say how many).
  const service = { runner_pool_size: 1, gpus: 0, ...((raw['service'] as Record<string, unknown>) ?? {}), workspace, port: 0, host: '127.0.0.1' };
  // No machine history sampler either (it would run nvidia-smi and rocm-smi every few seconds),
  // unless the test configures `machine`.
  const machine = raw['machine'] ?? { history: { enabled: false } };
  const token = opts.token === undefined ? TEST_TOKEN : opts.token;
  let running: RunningService;
  try {
    const config = validateConfig({ ...raw, service, machine }, 'test');
    running = await startService({ config, token, ...(opts.capabilities ? { capabilities: opts.capabilities } : {}) });
  } catch (err) {
    // A start that fails (tests of bad configuration) leaves no workspace behind either.
    if (!opts.workspace) await rm(workspace, { recursive: true, force: true });
    throw err;
  }
  t.teardown(async () => {
    // Tasks outlive the service by design (a restart adopts them); a test must not leave any:
    // a leftover fails the test, named, and is then killed so the next test starts clean.
    for (const task of await liveTaskProcesses(workspace)) reportLeak(`${task} still running when its service closed`);
    await killTaskProcesses(workspace);
    await running.close();
    if (!opts.workspace) await rm(workspace, { recursive: true, force: true });
  });
  const authed = (init: RequestInit = {}): RequestInit => ({
    ...init,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string> | undefined) },
  });
  const fetchPath = (path: string, init?: RequestInit) => fetch(`${running.url}${path}`, authed(init));
  /** POSTs a JSON body to a Job route; answers its status and body text. */
  const post = async (path: string, body: unknown): Promise<{ status: number; text: string }> => {
    const json = JSON.stringify(body);
    if (callsOverSockets) {
      const res = await fetchPath(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json });
      return { status: res.status, text: await res.text() };
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const res = await running.request({ method: 'POST', path, headers, body: json });
    return { status: res.status, text: res.text() };
  };
  return {
    ...running,
    close: running.close,
    token,
    fetch: fetchPath,
    async call<N extends CalledName>(name: N, args = {}, extra = {}) {
      const res = await post(`/jobs/${name}`, { arguments: args, ...extra });
      // The one cast: the service answers what the Job's schema declares (job-answers.test.ts checks the map).
      return { status: res.status, body: JSON.parse(res.text) as ReplyOf<N> };
    },
    async events<N extends CalledName>(name: N, args = {}) {
      const res = await post(`/jobs/${name}/events`, { arguments: args });
      const events = res.status === 200 ? parseSse(res.text) : [];
      const last = events.at(-1);
      // The one cast, as in `call`: a result event is the Job's JobResponse with kind=result.
      return { status: res.status, raw: res.text, events, result: last?.['kind'] === 'result' ? (last as ReplyOf<N>) : undefined };
    },
  };
}

