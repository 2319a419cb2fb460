import type { Test } from 'tap';
import { startModelServer, type ModelServer } from '../../harness/model-server.js';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.js';
import type { AgentBlockPatch } from '../../schemas/events.js';

export type AgentEvent = Record<string, unknown> & { kind: string };
type Patch = AgentBlockPatch;

/** A service whose `agent` section points at a fresh model server fixture. */
export async function startAgentService(
  t: Test,
  agent: Record<string, unknown> = {},
  opts: TestServiceOptions = {},
): Promise<{ service: TestService; model: ModelServer }> {
  const model = await startModelServer(t);
  const section = { backend: 'openai', base_url: model.baseUrl, model: 'scripted-model', max_retries: 0, ...agent };
  const service = await startTestService(t, { ...opts, config: { ...(opts.config ?? {}), agent: section } });
  return { service, model };
}

/**
 * One agent service with default settings for the tests of a file that need none of their own
 * (each makes sessions of its own): started by the first test that asks, closed when `t` (the
 * file) ends; every call resets its model server, so a test sees requests from 0 as with a fresh one.
 */
export function sharedAgentService(t: Test): () => Promise<{ service: TestService; model: ModelServer }> {
  let shared: Promise<{ service: TestService; model: ModelServer }> | undefined;
  return async () => {
    shared ??= startAgentService(t);
    const started = await shared;
    started.model.reset();
    return started;
  };
}

/** Every patch of the `agent_message` events, in order. */
export function patchesOf(events: readonly Record<string, unknown>[]): Patch[] {
  return events.filter((e) => e['kind'] === 'agent_message').flatMap((e) => e['presentation'] as Patch[]);
}

/**
 * The spec's patch rules, as a list of violations (empty when all hold): `sequence` counts from 0
 * without gaps, every patch of a block comes after its `start`, `finish` is each block's last
 * patch, and every started block is finished.
 */
export function patchOrderProblems(events: readonly Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  const messages = events.filter((e) => e['kind'] === 'agent_message');
  messages.forEach((e, i) => {
    if (e['sequence'] !== i) problems.push(`event ${i} has sequence ${String(e['sequence'])}`);
  });
  const state = new Map<string, 'open' | 'finished'>();
  for (const p of patchesOf(events)) {
    const s = state.get(p.block_id);
    if (p.operation === 'start') {
      if (s) problems.push(`${p.block_id} started twice`);
      state.set(p.block_id, 'open');
    } else if (s !== 'open') {
      problems.push(`${p.operation} of ${p.block_id} ${s ? 'after its finish' : 'before its start'}`);
    } else if (p.operation === 'finish') {
      state.set(p.block_id, 'finished');
    }
  }
  for (const [id, s] of state) if (s !== 'finished') problems.push(`${id} never finished`);
  if (events.at(-1)?.['kind'] !== 'result') problems.push('the stream does not end with result');
  return problems;
}

/** The final text of each block (start payload, appends, replace), like a client draws it. */
export function drawBlocks(events: readonly Record<string, unknown>[]): Array<{ id: string; type: string; text: string; payload: Record<string, unknown> }> {
  const blocks = new Map<string, { id: string; type: string; text: string; payload: Record<string, unknown> }>();
  for (const p of patchesOf(events)) {
    if (p.operation === 'start') blocks.set(p.block_id, { id: p.block_id, type: p.block_type, text: '', payload: p.payload });
    const b = blocks.get(p.block_id)!;
    if (p.operation === 'append') b.text += p.delta;
    if (p.operation === 'replace') {
      b.text = p.delta;
      b.payload = p.payload;
    }
  }
  return [...blocks.values()];
}
