import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { makeWorkspace, writeFixturePlugin } from '../tasks/task-helpers.js';
import type { AuditRecord } from '../../core/audit.js';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';

const READER = 'reader-token-0123456789abcdef';
const AGENT = 'agent-token-0123456789abcdef';
const READER_JOBS = ['version', 'list_task_ids'];
const AGENT_JOBS = ['submit', 'await_task', 'status', 'get_task_context', 'version'];
const tokens = [
  { name: 'reader', token: READER, jobs: READER_JOBS },
  { name: 'agent', token: AGENT, jobs: AGENT_JOBS },
];

/** Plain calls take the service's fast path; with a progress token they go through the SDK server. */
const WAYS = [
  ['plain', undefined],
  ['with a progress token', { onprogress: () => undefined }],
] as const;

type Answer<T> = { answer: T; success: boolean; metadata: Record<string, unknown> };
const structured = <T>(result: CallToolResult) => result.structuredContent as Answer<T>;

t.test("a scoped token's tools/list holds exactly its Jobs; a call outside it is refused, runs nothing, and is audited", async (t) => {
  const svc = await startTestService(t, { config: { service: { tokens } } });
  const reader = await connectMcp(t, svc.url, READER);
  const agent = await connectMcp(t, svc.url, AGENT);
  t.same((await reader.listTools()).tools.map((tool) => tool.name).sort(), [...READER_JOBS].sort(), 'reader: exactly its Jobs');
  t.same((await agent.listTools()).tools.map((tool) => tool.name).sort(), [...AGENT_JOBS].sort(), 'agent: exactly its Jobs');
  const all = await connectMcp(t, svc.url, svc.token);
  const allTools = (await all.listTools()).tools;
  t.ok(allTools.some((tool) => tool.name === 'shell'), 'the service token lists every Job');
  // The agent's server has no MCP tasks (its scope lacks wait_task and cancel): listing its
  // submit first must not take the task support off the service token's submit.
  t.same(allTools.find((tool) => tool.name === 'submit')?.execution, { taskSupport: 'optional' }, "the service token's submit still supports MCP tasks");
  t.equal((await agent.listTools()).tools.find((tool) => tool.name === 'submit')?.execution, undefined, "the agent's does not");

  const dir = await mkdtemp(join(tmpdir(), 'taskyard-mcp-scope-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const marker = join(dir, 'ran');
  for (const [way, options] of WAYS) {
    await t.rejects(reader.callTool({ name: 'shell', arguments: { command: `touch ${marker}` } }, undefined, options), { code: -32602, message: /token "reader" may not call shell: its scope does not include it/ }, `shell refused (${way})`);
    await t.rejects(reader.callTool({ name: 'submit', arguments: { task: 'demo', x: 1, y: 2 } }, undefined, options), { message: /may not call submit/ }, `submit refused (${way})`);
    const version = await reader.callTool({ name: 'version', arguments: {} }, undefined, options);
    t.equal(version.isError, false, `its own tool works (${way})`);
  }
  t.notOk(existsSync(marker), 'no shell command ran');
  t.same(structured<string[]>((await reader.callTool({ name: 'list_task_ids', arguments: {} })) as CallToolResult).answer, [], 'no Task was created');

  const file = join(svc.workspace, '.taskyard', 'audit.jsonl');
  const records = await waitFor(async () => {
    const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
    const parsed = lines.map((l) => JSON.parse(l) as AuditRecord).filter((r) => r.token === 'reader');
    return parsed.length >= 7 ? parsed : null;
  }, 10_000, 'the audit log');
  t.same(
    records.map(({ transport, job, outcome }) => `${transport} ${job} ${outcome}`),
    ['mcp shell refused', 'mcp submit refused', 'mcp version ok', 'mcp shell refused', 'mcp submit refused', 'mcp version ok', 'mcp list_task_ids ok'],
    'every call by the token, refusals included, by its name',
  );
});

// One service with the default configuration for the await_task tests (each follows Tasks of its own).
const plain = await startTestService(t);

t.test('await_task answers at its bound while the run goes on (not an error), then the finished status', async (t) => {
  const svc = plain;
  const mcp = await connectMcp(t, svc.url, svc.token);
  const submitted = await mcp.callTool({ name: 'submit', arguments: { task: 'sleep', seconds: 2 } });
  const handle = structured<TaskHandle>(submitted as CallToolResult).answer;
  const early = (await mcp.callTool({ name: 'await_task', arguments: { task_id: handle.task_id, timeout: 0.2 } })) as CallToolResult;
  t.equal(early.isError, false, 'a run still going is not an error');
  t.equal(structured<TaskStatus>(early).metadata['done'], false);
  t.match(structured<TaskStatus>(early).answer.state, /^(queued|running)$/);
  let calls = 1;
  let last = early;
  while (structured<TaskStatus>(last).metadata['done'] !== true && calls < 100) {
    last = (await mcp.callTool({ name: 'await_task', arguments: { task_id: handle.task_id, run_id: handle.run_id, timeout: 1 } })) as CallToolResult;
    calls++;
  }
  t.same([structured<TaskStatus>(last).answer.state, last.isError, structured<TaskStatus>(last).metadata['done']], ['succeeded', false, true]);
  t.ok(calls >= 2, `took ${calls} calls`);

  const failed = structured<TaskHandle>((await mcp.callTool({ name: 'submit', arguments: { task: 'demo', x: 1, y: 1, fail: true } })) as CallToolResult).answer;
  const end = (await mcp.callTool({ name: 'await_task', arguments: { task_id: failed.task_id } })) as CallToolResult;
  t.same([end.isError, structured<TaskStatus>(end).answer.state, structured<TaskStatus>(end).metadata['done']], [true, 'failed', true], 'success follows wait_task once done');
  const wrongRun = (await mcp.callTool({ name: 'await_task', arguments: { task_id: failed.task_id, run_id: 'not-this-run' } })) as CallToolResult;
  t.equal(wrongRun.isError, true);
  t.match(structured<string>(wrongRun).answer, /ValueError: run_id not-this-run is not the current execution/);
  await t.rejects(mcp.callTool({ name: 'await_task', arguments: { task_id: failed.task_id, timeout: 56 } }), { code: -32602 }, 'timeout above 55 s is invalid');
  await t.rejects(mcp.callTool({ name: 'await_task', arguments: { task_id: failed.task_id, timeout: 0 } }), { code: -32602 }, 'timeout 0 is invalid');
});

/** The client's request timeout here: shorter than the Task, as the SDK's 60 s is shorter than a long one. */
const CLIENT_TIMEOUT_MS = 4_000;
/** await_task's bound in this test: under the client's timeout, as its default is under 60 s. */
const AWAIT_S = 2;
const TASK_S = 6;

/**
 * An agent as the hosts run them: the official SDK client with a request timeout shorter than the
 * Task, no progress token, no MCP Tasks; plain callTool('await_task') in a loop follows the Task to
 * its end (a plain wait_task would be cut at the timeout). The hosts' clients time out at the SDK's
 * default (60 s): await_task's default and largest bounds, as tools/list gives them, fit under it.
 */
t.test('a loop of plain await_task calls follows a Task longer than the client timeout to its end', async (t) => {
  const svc = plain;
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { tools } = await mcp.listTools();
  const bound = (tools.find((x) => x.name === 'await_task')!.inputSchema.properties as Record<string, { default: number; maximum: number }>)['timeout']!;
  t.ok(bound.default * 1000 < DEFAULT_REQUEST_TIMEOUT_MSEC, `await_task's default bound (${bound.default} s) is under the SDK's default timeout`);
  t.ok(bound.maximum * 1000 < DEFAULT_REQUEST_TIMEOUT_MSEC, `await_task's largest bound (${bound.maximum} s) is under the SDK's default timeout`);

  const submitted = (await mcp.callTool({ name: 'submit', arguments: { task: 'sleep', seconds: TASK_S, steps: 3 } })) as CallToolResult;
  const handle = (submitted.structuredContent as Answer<TaskHandle>).answer;
  const started = Date.now();
  const answers: Array<Answer<TaskStatus>> = [];
  for (;;) {
    // Plain: no onprogress, so nothing resets the client's timeout.
    const args = { task_id: handle.task_id, run_id: handle.run_id, timeout: AWAIT_S };
    const result = (await mcp.callTool({ name: 'await_task', arguments: args }, undefined, { timeout: CLIENT_TIMEOUT_MS })) as CallToolResult;
    const answer = result.structuredContent as Answer<TaskStatus>;
    answers.push(answer);
    if (answer.metadata['done'] === true) {
      t.equal(result.isError, false, 'the finished run is a success');
      break;
    }
    t.equal(result.isError, false, 'a still-running answer is not an error');
    t.match(answer.answer.state, /^(queued|running)$/);
    if (answers.length > 20) throw new Error(`await_task never finished: ${JSON.stringify(answer)}`);
  }
  t.equal(answers.at(-1)!.answer.state, 'succeeded');
  t.ok(answers.length >= 2, `the loop took ${answers.length} calls over ${Math.round((Date.now() - started) / 1000)} s`);
});

t.test('tool results that name artifacts link them as resource_link items that download their exact bytes', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  const svc = await startTestService(t, { workspace, config: { service: { tokens } } });
  const agent = await connectMcp(t, svc.url, AGENT);
  const handle = structured<TaskHandle>((await agent.callTool({ name: 'submit', arguments: { task: 'artifacts' } })) as CallToolResult).answer;
  const expected = await (async () => {
    for (;;) {
      const result = (await agent.callTool({ name: 'await_task', arguments: { task_id: handle.task_id, timeout: 30 } })) as CallToolResult;
      if (structured<TaskStatus>(result).metadata['done']) return result;
    }
  })();
  const status = structured<TaskStatus>(expected).answer;
  t.equal(status.state, 'succeeded');
  const artifact = (status.result['artifacts'] as Record<string, { path: string; size: number }>)['greeting']!;
  const bytes = await readFile(join(workspace, status.task_type, status.task_id, artifact.path));

  for (const [way, options] of WAYS) {
    for (const [tool, args] of [
      ['await_task', { task_id: handle.task_id }],
      ['status', { task_id: handle.task_id }],
      ['get_task_context', { task_id: handle.task_id }],
    ] as const) {
      const result = (await agent.callTool({ name: tool, arguments: args }, undefined, options)) as CallToolResult;
      const links = result.content.filter((c) => c.type === 'resource_link');
      const greeting = links.find((l) => l.name === 'greeting');
      t.ok(greeting, `${tool} (${way}) links the artifact`);
      if (!greeting || greeting.type !== 'resource_link') continue;
      t.same([greeting.mimeType, greeting.size], ['text/plain; charset=utf-8', bytes.length], 'with its media type and size');
      t.ok(greeting.uri.startsWith(`${svc.url}/files?path=`), `an absolute download URL of the service: ${greeting.uri}`);
      const res = await fetch(greeting.uri, { headers: { authorization: `Bearer ${AGENT}` } });
      t.equal(res.status, 200);
      t.same(Buffer.from(await res.arrayBuffer()), bytes, 'the exact bytes');
      t.ok(links.some((l) => l.name === 'log'), 'and the log');
      t.equal(result.content[0]?.type, 'text', 'the JobResponse text comes first, as before');
    }
  }
});

t.test('task-augmented calls (MCP Tasks) of a scoped token are its own: audited, the submitter kept; no tasks capability without their Jobs', async (t) => {
  const RUNNER = 'runner-token-0123456789abcdef';
  const runnerJobs = ['submit', 'shell', 'status', 'wait_task', 'cancel', 'list_task_statuses'];
  const svc = await startTestService(t, { config: { service: { tokens: [...tokens, { name: 'runner', token: RUNNER, jobs: runnerJobs }] } } });
  const reader = await connectMcp(t, svc.url, READER);
  t.equal(reader.getServerCapabilities()?.tasks, undefined, 'a token without the Jobs behind MCP tasks is not offered them');
  const runner = await connectMcp(t, svc.url, RUNNER);
  t.ok(runner.getServerCapabilities()?.tasks, 'a token with them is');
  for (const [name, args] of [
    ['submit', { task: 'demo', x: 1, y: 2 }],
    ['shell', { command: 'true' }],
  ] as const) {
    const stream = runner.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } });
    let last: { type: string } | undefined;
    for await (const message of stream) last = message;
    t.equal(last?.type, 'result', `${name} as an MCP task ends with its result`);
  }
  const records = await waitFor(async () => {
    const lines = (await readFile(join(svc.workspace, '.taskyard', 'audit.jsonl'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
    const parsed = lines.map((l) => JSON.parse(l) as AuditRecord).filter((r) => r.token === 'runner');
    return parsed.length >= 2 ? parsed : null;
  }, 10_000, 'the audit log');
  t.same(records.map(({ transport, job, outcome }) => `${transport} ${job} ${outcome}`).sort(), ['mcp shell ok', 'mcp submit ok']);
  const page = await svc.call('query_task_statuses', {});
  t.same(Object.values(page.body.metadata['submitted_by'] as Record<string, string>), ['runner'], 'the Task it submitted is known as its');
});
