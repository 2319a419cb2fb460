/**
 * What the service adds to one Agent turn: a scripted model reply of many small text deltas from
 * the model server fixture. The floor is the fixture's own pace (its stream read raw by `fetch` in
 * this process); then the `ai` SDK reading it in this process (sharing the event loop with the
 * fixture, so slower than in a process of its own); then `taskyard serve` running `agent_chat`
 * over `/events` (SDK in the service process, presentation patches, SSE, session records) and
 * over JSON. Medians of several turns; ratios are against the floor of the same run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streamText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { startModelServer, type ModelServer } from '../harness/model-server.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';
import { boundedFetch } from '../supervisor/agent/bounded-fetch.js';

const PIECES = 3000;
const TURNS = 5;
const TEXT = 'abc'.repeat(PIECES);

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timed(model: ModelServer, turn: () => Promise<void>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    model.reply({ items: [{ text: TEXT }] });
    const start = performance.now();
    await turn();
    ms.push(performance.now() - start);
  }
  return median(ms);
}

export async function run(): Promise<void> {
  const teardowns: Array<() => unknown> = [];
  const model = await startModelServer({ teardown: (fn: () => unknown) => void teardowns.push(fn) });
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-agent-'));
  const config = join(dir, 'config.yaml');
  await writeFile(config, `agent:\n  backend: openai\n  base_url: ${model.baseUrl}\n  model: scripted\n  max_retries: 0\n`);
  const svc = await startServiceProcess({ args: ['--config', config] });
  try {
    const raw = await timed(model, async () => {
      const res = await fetch(`${model.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'scripted', messages: [], stream: true }) });
      await res.text();
    });
    const sdk = createOpenAICompatible({ name: 'bench', baseURL: model.baseUrl }).chatModel('scripted');
    const inProcess = await timed(model, async () => {
      for await (const part of streamText({ model: sdk, prompt: 'go' }).fullStream) void part;
    });
    // The same, its stream read through the line bound the service puts on model responses.
    const bounded = createOpenAICompatible({ name: 'bench', baseURL: model.baseUrl, fetch: boundedFetch() }).chatModel('scripted');
    const inProcessBounded = await timed(model, async () => {
      for await (const part of streamText({ model: bounded, prompt: 'go' }).fullStream) void part;
    });
    const call = (path: string) => async () => {
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { message: 'go' } }) });
      const text = await res.text();
      if (!text.includes(TEXT.slice(0, 30))) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
    };
    const sse = await timed(model, call('/jobs/agent_chat/events'));
    const json = await timed(model, call('/jobs/agent_chat'));
    printTable(`One Agent turn of ${PIECES} text deltas (median of ${TURNS})`, ['path', 'ms', 'x floor'], [
      ['the fixture read raw (floor)', raw, 1],
      ['ai SDK streamText in this process', inProcess, inProcess / raw],
      ['the same through boundedFetch (16 MiB line bound)', inProcessBounded, inProcessBounded / raw],
      ['agent_chat over /events (patches, SSE, records)', sse, sse / raw],
      ['agent_chat over JSON (records)', json, json / raw],
    ]);
  } finally {
    await svc.stop();
    for (const fn of teardowns.reverse()) await fn();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
