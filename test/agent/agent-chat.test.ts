import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { AuditRecord } from '../../core/audit.js';
import { DEFAULT_AGENT_TOOLS } from '../../schemas/config.js';
import { validateConfig } from '../../supervisor/common/config.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { drawBlocks, patchOrderProblems, sharedAgentService, startAgentService } from './agent-helpers.js';

const sharedService = sharedAgentService(t);

const CHAT = 'chat-token-0123456789abcdef';

t.test('a plain text turn streams a text block over /events and answers the text alone over JSON and MCP', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'Hello from the scripted model.' }] });
  const { status, events } = await service.events('agent_chat', { message: 'Say hello' });
  t.equal(status, 200);
  t.same(patchOrderProblems(events), []);
  const result = events.at(-1)!;
  t.match(result, { kind: 'result', success: true, answer: 'Hello from the scripted model.', metadata: { model: 'scripted-model', usage: { input_tokens: 11, output_tokens: 7 } } });
  const sessionId = (result['metadata'] as Record<string, string>)['session_id']!;
  t.match(sessionId, /^s-/);
  t.match((result['metadata'] as Record<string, string>)['turn_id'], /^t-/);
  t.ok(events.filter((e) => e['kind'] === 'agent_message').every((e) => e['session_id'] === sessionId), 'every event names the session');
  const blocks = drawBlocks(events);
  t.match(blocks, [
    { type: 'text', text: 'Say hello', payload: { role: 'user' } },
    { type: 'text', text: 'Hello from the scripted model.', payload: { role: 'assistant' } },
  ]);
  t.ok(events.filter((e) => e['type_name'] === 'text-delta').length > 3, 'the text arrived as several deltas');

  // The same session over JSON: the final answer alone, and the model saw the earlier messages.
  model.reply({ items: [{ text: 'Second answer.' }] });
  const json = await service.call('agent_chat', { message: 'Again', session_id: sessionId });
  t.same(json.body.answer, 'Second answer.');
  t.match(json.body.metadata, { session_id: sessionId, model: 'scripted-model' });
  const sent = model.requests[1]!.body['messages'] as Array<{ role: string; content: unknown }>;
  t.same(sent.slice(1).map((m) => [m.role, m.content]), [['user', 'Say hello'], ['assistant', 'Hello from the scripted model.'], ['user', 'Again']]);

  model.reply({ items: [{ text: 'Over MCP.' }] });
  const mcp = await connectMcp(t, service.url, service.token);
  const called = await mcp.callTool({ name: 'agent_chat', arguments: { message: 'Via MCP', session_id: sessionId } });
  t.match(called.structuredContent, { answer: 'Over MCP.', success: true, metadata: { session_id: sessionId } });
});

t.test('a turn that calls list_task_statuses answers from its result, with the Job and its answer in a tool block', async (t) => {
  const { service, model } = await sharedService();
  const submitted = await service.call('submit', { task: 'demo', x: 2, y: 3 });
  t.equal(submitted.body.success, true, JSON.stringify(submitted.body));
  model.reply({ items: [{ reasoning: 'I should look at the tasks.' }, { tool: 'list_task_statuses', input: {} }] }, { items: [{ text: 'There is one demo Task.' }] });
  const { events } = await service.events('agent_chat', { message: 'What runs?' });
  t.same(patchOrderProblems(events), []);
  t.match(events.at(-1), { kind: 'result', success: true, answer: 'There is one demo Task.' });
  const tool = drawBlocks(events).find((b) => b.type === 'tool')!;
  t.match(tool.payload, { job: 'list_task_statuses', arguments: {}, response: { success: true } });
  t.ok(JSON.stringify(tool.payload['response']).includes('demo'), 'the tool block holds the JobResponse');
  const thinking = drawBlocks(events).find((b) => b.type === 'thinking');
  t.equal(thinking?.text, 'I should look at the tasks.');
  // The model's second request carries the tool result, so it answered from it.
  const second = model.requests[1]!.body['messages'] as Array<{ role: string; content: string }>;
  const toolMessage = second.find((m) => m.role === 'tool')!;
  t.ok(toolMessage.content.includes('demo'), 'the model was given the Job\'s answer');
});

t.test('a tool call failing validation and a tool outside agent.tools are refused and the model is told', async (t) => {
  const { service, model } = await startAgentService(t, { tools: ['status', 'version'] });
  model.reply(
    { items: [{ tool: 'status', input: { task_id: 42 } }, { tool: 'shell', input: { command: 'touch /tmp/never' } }] },
    { items: [{ text: 'Both were refused.' }] },
  );
  const { events } = await service.events('agent_chat', { message: 'Try things' });
  t.same(patchOrderProblems(events), []);
  t.match(events.at(-1), { kind: 'result', success: true, answer: 'Both were refused.' });
  const tools = drawBlocks(events).filter((b) => b.type === 'tool');
  t.match(tools, [
    { payload: { job: 'status', response: { success: false, answer: /^ValueError: invalid arguments for status: task_id: must be string/ } } },
    { payload: { job: 'shell', response: { success: false, answer: /^PermissionError: shell is not among the agent's tools/ } } },
  ]);
  // The refusal comes at once, the validated call a moment later: compare without order.
  t.match(drawBlocks(events).filter((b) => b.type === 'error').map((b) => b.text).sort(), [/^shell failed: PermissionError/, /^status failed: ValueError: invalid arguments/], 'each tool error also gets an error block');
  const redrawn = (await service.call('get_agent_session', { session_id: (events.at(-1)!['metadata'] as { session_id: string }).session_id })).body.answer;
  t.same(redrawn.blocks.map((b) => b.block_type), ['text', 'tool', 'tool', 'error', 'error', 'text'], 'the stored session redraws them');
  const told = JSON.stringify(model.requests[1]!.body['messages']);
  t.match(told, /invalid arguments for status/, 'the model read the validation failure');
  t.match(told, /shell/, 'the model read that shell is not available');
  t.notMatch(told, /Both were refused/);
});

t.test('max_steps bounds the tool loop of one turn', async (t) => {
  const { service, model } = await startAgentService(t, { max_steps: 2 });
  model.reply({ items: [{ tool: 'version', input: {} }] }, { items: [{ tool: 'version', input: {} }] }, { items: [{ text: 'never asked' }] });
  const { events } = await service.events('agent_chat', { message: 'Loop' });
  t.same(patchOrderProblems(events), []);
  t.equal(model.requests.length, 2, 'no third model request');
  t.match(events.at(-1), { kind: 'result', success: false, answer: /^RuntimeError: the turn stopped after agent.max_steps \(2\) model steps/ });
  t.match(drawBlocks(events).at(-1), { type: 'error', text: /agent.max_steps/ });
  t.equal(drawBlocks(events).filter((b) => b.type === 'tool').length, 2);
});

t.test('without an agent section every agent Job names the config keys to set', async (t) => {
  const service = await startTestService(t);
  for (const [job, args] of [
    ['agent_chat', { message: 'hi' }],
    ['list_agent_sessions', {}],
    ['get_agent_session', { session_id: 's-x' }],
    ['cancel_agent_turn', { session_id: 's-x' }],
    ['delete_agent_session', { session_id: 's-x' }],
  ] as const) {
    const { status, body } = await service.call(job, args);
    t.equal(status, 200);
    t.match(body, { success: false, answer: /^RuntimeError: the agent is not configured: .*agent\.backend .*agent\.base_url .*agent\.model/ }, job);
  }
});

t.test('a listed tool that is not a public Job is reported once at start', async (t) => {
  const warned: string[] = [];
  const warn = console.warn;
  console.warn = (message: string) => void warned.push(message);
  t.teardown(() => {
    console.warn = warn;
  });
  await startAgentService(t, { tools: ['status', 'shel'] });
  t.ok(warned.some((m) => /^taskyard: agent.tools: shel is not a public Job of this service/.test(m)), warned.join('\n'));
  t.notOk(warned.some((m) => /status/.test(m)));
});

t.test('an Agent turn started with a scoped token gets only the tools that token may call, audited as its agent calls', async (t) => {
  const tokens = [{ name: 'chat', token: CHAT, jobs: ['agent_chat', 'version'] }];
  const { service, model } = await startAgentService(t, { tools: ['version', 'shell'] }, { config: { service: { tokens } } });
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-agent-scope-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const marker = join(dir, 'ran');
  model.reply({ items: [{ tool: 'version', input: {} }, { tool: 'shell', input: { command: `touch ${marker}` } }] }, { items: [{ text: 'Done.' }] });
  const res = await fetch(`${service.url}/jobs/agent_chat`, { method: 'POST', headers: { authorization: `Bearer ${CHAT}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { message: 'Run things' } }) });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const offered = (model.requests[0]!.body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
  t.same(offered, ['version'], 'the model is offered only the tools within the token\'s scope');
  t.notOk(existsSync(marker), 'shell never ran on the agent\'s behalf');

  const records = await waitFor(async () => {
    const text = await readFile(join(service.workspace, '.taskyard', 'audit.jsonl'), 'utf8').catch(() => '');
    const parsed = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditRecord);
    return parsed.some((r) => r.job === 'agent_chat') ? parsed : null;
  }, 10_000, 'the audit log');
  t.same(
    records.map(({ token, transport, job, outcome }) => `${token} ${transport} ${job} ${outcome}`),
    ['chat agent version ok', 'chat http agent_chat ok'],
    'the tool call is the token\'s, made by its agent',
  );

  model.reply({ items: [{ text: 'Hi.' }] });
  await service.call('agent_chat', { message: 'And you?' });
  const all = (model.requests.at(-1)!.body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
  t.same(all.sort(), ['shell', 'version'], 'the service token\'s turns keep every configured tool');
});

t.test('the agent section: defaults filled, bad fields named', async (t) => {
  const config = validateConfig({ agent: { backend: 'openai', base_url: 'http://127.0.0.1:8000/v1', model: 'm' } }, 'test');
  t.match(config.agent, { max_steps: 16, max_retries: 2, tools: [...DEFAULT_AGENT_TOOLS] });
  t.notOk(config.agent?.tools.includes('shell') || config.agent?.tools.includes('submit') || config.agent?.tools.includes('cancel'), 'the default tools only read');
  t.equal(validateConfig({}, 'test').agent, undefined, 'no section: no agent');
  t.throws(() => validateConfig({ agent: { backend: 'gpt', base_url: 'http://x/v1', model: 'm' } }, 'test'), /agent\.backend/);
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'x', model: 'm' } }, 'test'), /agent\.base_url/);
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'http://x/v1', model: 'm', api_key: 'sk-123' } }, 'test'), /agent\.api_key: unknown field/, 'a key itself is refused: only the name of its variable');
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'http://x/v1', model: 'm', max_steps: 0 } }, 'test'), /agent\.max_steps/);
});

t.test('taskyard chat prints the streamed answer, the Jobs called, and the session to go on with', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const { service, model } = await sharedService();
  const cli = (args: string[]): Promise<CliRun> => runCli(args, { HOME: home, TASKYARD_URL: service.url, TASKYARD_TOKEN: service.token ?? '' });

  model.reply({ items: [{ reasoning: 'hidden thoughts' }, { tool: 'version', input: {} }] }, { items: [{ text: 'The service runs.' }] });
  const first = await cli(['chat', 'Is it up?']);
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, 'The service runs.\n');
  t.notMatch(first.stdout + first.stderr, /hidden thoughts/, 'thinking is not printed');
  t.match(first.stderr, /\[job\] version \{\} → ok/);
  const session = /session: (s-\w+)/.exec(first.stderr)?.[1];
  t.ok(session);

  model.reply({ items: [{ text: 'Still here.' }] });
  const again = await cli(['chat', 'And now?', '--session', session!]);
  t.equal(again.code, 0);
  t.equal(again.stdout, 'Still here.\n');
  t.equal((model.requests.at(-1)!.body['messages'] as unknown[]).length, 6, 'the same session went on (system, 2 turns, tool messages)');

  model.reply({ status: 401 });
  const refused = await cli(['chat', 'Hm', `--session=${session!}`]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /\[error\] .*refused the request \(HTTP 401\)/);

  const usage = await cli(['chat']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, 'give the message to send');
  t.equal((await cli(['chat', 'x', '--session'])).code, 2);
});
