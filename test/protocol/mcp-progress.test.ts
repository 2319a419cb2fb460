// Runs on every HTTP front end.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { isAlive } from '../../workers/process-tree.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { TaskHandle } from '../../schemas/tasks.js';

/** Progress at least this often: far below the client timeouts used here. */
const config = { service: { mcp_progress_interval_ms: 300 } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

type Handle = Pick<TaskHandle, 'task_id' | 'run_id'>;

async function submit(svc: TestService, args: Record<string, unknown>): Promise<Handle> {
  const res = await svc.call('submit', args);
  if (!res.body.success) throw new Error(`submit failed: ${JSON.stringify(res.body)}`);
  const { task_id, run_id } = res.body.answer;
  return { task_id, run_id };
}

const callBody = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t, { config });

t.test('wait_task with a progress token outlives a client timeout shorter than the Task', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  // One step and one log line only at the end: 3 s in which the Task itself reports nothing new.
  const handle = await submit(svc, { task: 'sleep', seconds: 3 });
  const seen: Progress[] = [];
  const started = Date.now();
  const result = await mcp.callTool({ name: 'wait_task', arguments: { ...handle } }, undefined, {
    timeout: 1500,
    resetTimeoutOnProgress: true,
    onprogress: (p) => seen.push(p),
  });
  t.ok(Date.now() - started >= 2500, 'the call lasted longer than its timeout');
  const answer = (result.structuredContent as { answer: { state: string; task_id: string } }).answer;
  t.equal(answer.state, 'succeeded', 'the terminal TaskStatus came back');
  t.equal(answer.task_id, handle.task_id);
  t.ok(seen.length >= 4, `progress kept coming while nothing changed (${seen.length})`);
  for (let i = 1; i < seen.length; i++) t.ok(seen[i]!.progress > seen[i - 1]!.progress, 'progress increases');
  t.ok(seen.every((p) => typeof p.message === 'string' && p.message !== ''), 'every notification has a message');
  t.ok(seen.some((p) => /^sleep/.test(p.message!)), 'a message names the step');
});

t.test('without a progress token the same call times out, and the answer is plain JSON', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const handle = await submit(svc, { task: 'sleep', seconds: 3 });
  await t.rejects(mcp.callTool({ name: 'wait_task', arguments: { ...handle } }, undefined, { timeout: 1000 }), /timed out/);
  const res = await svc.fetch('/mcp', { method: 'POST', headers: MCP_HEADERS, body: callBody('wait_task', { ...handle }) });
  t.match(res.headers.get('content-type'), /application\/json/);
  const body = (await res.json()) as { id: number; result: { structuredContent: { answer: { state: string } } } };
  t.equal(body.id, 7);
  t.equal(body.result.structuredContent.answer.state, 'succeeded');
});

t.test('step, percentage and log changes arrive as messages a person can read, over SSE', async (t) => {
  const svc = await startTestService(t, { config: { service: { mcp_progress_interval_ms: 60_000 } } });
  const handle = await submit(svc, { task: 'sleep', seconds: 1.2, steps: 4 });
  const res = await svc.fetch('/mcp', { method: 'POST', headers: MCP_HEADERS, body: callBody('stream_task', { task_id: handle.task_id }, { progressToken: 'tok' }) });
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  const messages = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as { method?: string; id?: number; params?: { progressToken: string; message: string }; result?: { structuredContent: { answer: { state: string } } } });
  const notes = messages.filter((m) => m.method === 'notifications/progress');
  const last = messages.at(-1)!;
  t.equal(last.id, 7, 'the response comes last');
  t.equal(last.result?.structuredContent.answer.state, 'succeeded');
  t.ok(notes.length >= 2, `changes were sent without waiting for the interval (${notes.length})`);
  t.ok(notes.every((n) => n.params?.progressToken === 'tok'), 'each carries the caller token');
  t.ok(notes.some((n) => /^sleep \d+% · step \d\/4$/.test(n.params!.message)), `messages show step, percentage and log line: ${JSON.stringify(notes.map((n) => n.params?.message))}`);
});

t.test('a client that disconnects mid-call stops the call; the service keeps serving', async (t) => {
  const pidFile = join(svc.workspace, 'shell.pid');
  const gone = new AbortController();
  const res = await svc.fetch('/mcp', {
    method: 'POST',
    headers: MCP_HEADERS,
    body: callBody('shell', { command: `echo $$ > ${pidFile}; exec sleep 60`, timeout: 120 }, { progressToken: 1 }),
    signal: gone.signal,
  });
  t.match(res.headers.get('content-type'), /text\/event-stream/, 'the heartbeat turned the answer into a stream');
  const pid = await waitFor(async () => Number(await readFile(pidFile, 'utf8').catch(() => '')) || null, 10_000, 'the shell pid');
  t.ok(await isAlive(pid), 'the command runs');
  gone.abort();
  await waitFor(async () => !(await isAlive(pid)), 10_000, 'the command to be killed');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const version = await mcp.callTool({ name: 'version', arguments: {} });
  t.equal((version.structuredContent as { success: boolean }).success, true, 'the service still answers');
});
