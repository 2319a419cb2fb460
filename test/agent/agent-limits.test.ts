import { appendFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { MODEL_LINE_LIMIT } from '../../supervisor/agent/bounded-fetch.js';
import { TURN_OUTPUT_LIMIT } from '../../supervisor/agent/run-turn.js';
import { SESSION_SIZE_LIMIT } from '../../supervisor/agent/session-store.js';
import { closedPort } from '../../harness/http-server.js';
import type { TestService } from '../helpers/service.js';
import { drawBlocks, patchOrderProblems, sharedAgentService, startAgentService } from './agent-helpers.js';

const messagesFile = (service: TestService, sessionId: string) => join(service.workspace, '.taskyard', 'agent', sessionId, 'messages.jsonl');
const sessionOf = (body: { metadata: unknown }) => (body.metadata as { session_id: string }).session_id;
/** The [role, content] pairs the model was sent in request `i` (the system prompt left out). */
const sent = (requests: Array<{ body: Record<string, unknown> }>, i: number) => (requests[i]!.body['messages'] as Array<{ role: string; content: unknown }>).filter((m) => m.role !== 'system');

const sharedService = sharedAgentService(t);

t.test('a tool call named like an Object.prototype member is refused like any unknown tool, and the session goes on', async (t) => {
  const { service, model } = await sharedService();
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
  model.reply({ items: names.map((tool) => ({ tool, input: {} })) }, { items: [{ text: 'None of those exist.' }] });
  const { events } = await service.events('agent_chat', { message: 'Call odd tools' });
  t.same(patchOrderProblems(events), []);
  t.match(events.at(-1), { kind: 'result', success: true, answer: 'None of those exist.' });
  const tools = drawBlocks(events).filter((b) => b.type === 'tool');
  t.same(tools.map((b) => b.payload['job']), names);
  for (const b of tools) t.match(b.payload['response'], { success: false, answer: new RegExp(`^PermissionError: ${b.payload['job']} is not among the agent's tools`) }, String(b.payload['job']));
  const told = JSON.stringify(sent(model.requests, 1));
  for (const name of names) t.match(told, new RegExp(`unavailable tool '${name}'. Available tools: version`), `the model read the refusal of ${name}`);

  model.reply({ items: [{ text: 'Still here.' }] });
  const next = await service.call('agent_chat', { message: 'Again', session_id: sessionOf(events.at(-1) as { metadata: unknown }) });
  t.match(next.body, { success: true, answer: 'Still here.' }, 'the next turn works');
});

t.test('a stored tool call without its result (a session bricked before) no longer breaks the next turn', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'First.' }] });
  const first = await service.call('agent_chat', { message: 'Start' });
  const sessionId = sessionOf(first.body);
  const at = new Date().toISOString();
  const dangling = { id: 'm-dangling', turn_id: 't-old', created_at: at, message: { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_orphan', toolName: 'valueOf', input: {} }] } };
  const end = { id: 'm-end', turn_id: 't-old', created_at: at, turn: { status: 'completed', usage: { input_tokens: null, output_tokens: null }, error: null } };
  await appendFile(messagesFile(service, sessionId), `${JSON.stringify(dangling)}\n${JSON.stringify(end)}\n`);

  model.reply({ items: [{ text: 'Recovered.' }] });
  const next = await service.call('agent_chat', { message: 'Go on', session_id: sessionId });
  t.match(next.body, { success: true, answer: 'Recovered.' }, JSON.stringify(next.body));
  const history = sent(model.requests, 1);
  const result = history.find((m) => m.role === 'tool');
  t.ok(result, 'the orphaned call was given a result');
  t.match(JSON.stringify(result), /call_orphan.*no result/);
  t.same(history.at(-1), { role: 'user', content: 'Go on' });
});

t.test('a torn last line of messages.jsonl does not swallow the next message', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'First.' }] });
  const sessionId = sessionOf((await service.call('agent_chat', { message: 'Start' })).body);
  const file = messagesFile(service, sessionId);
  await appendFile(file, '{"id":"m-torn","turn_id":"t-x","crea');

  model.reply({ items: [{ text: 'Heard you.' }] });
  t.match((await service.call('agent_chat', { message: 'After the crash', session_id: sessionId })).body, { success: true, answer: 'Heard you.' });
  t.same(sent(model.requests, 1).at(-1), { role: 'user', content: 'After the crash' }, 'the model got the new message');
  const page = (await service.call('get_agent_session', { session_id: sessionId })).body.answer;
  t.same(page.messages.map((m) => m.content).filter((c) => typeof c === 'string'), ['Start', 'After the crash'], 'the new message is stored');
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  t.equal(lines.filter((l) => l.startsWith('{"id":"m-torn"')).length, 1, 'the torn line is left on a line of its own');
  t.equal(lines.filter((l) => { try { JSON.parse(l); return false; } catch { return true; } }).length, 1, 'every other line is whole');
});

t.test("a turn's output is capped: the turn fails with the limit named, and the session stays usable", async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'Short start. ' }, { text: 'x'.repeat(TURN_OUTPUT_LIMIT + 1), whole: true }] });
  const { events } = await service.events('agent_chat', { message: 'Flood me' });
  t.same(patchOrderProblems(events), []);
  const result = events.at(-1) as { success: boolean; answer: string; metadata: { session_id: string; status: string } };
  // Compared in pieces: a failing match would print the whole flood.
  t.ok(JSON.stringify(result).length < 4096, 'the answer is not the flood');
  t.equal(result.success, false);
  t.equal(result.metadata.status, 'failed');
  t.match(result.answer.slice(0, 400), /^RuntimeError: the model server sent more than 4 MiB of output in one turn/);
  const stored = (await stat(messagesFile(service, result.metadata.session_id))).size;
  t.ok(stored < 64 * 1024, `the session keeps no flood (${stored} bytes)`);

  model.reply({ items: [{ text: 'Back to normal.' }] });
  t.match((await service.call('agent_chat', { message: 'Hello?', session_id: result.metadata.session_id })).body, { success: true, answer: 'Back to normal.' });
});

t.test('one runaway stream line is cut off as it arrives, not parsed whole', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'z'.repeat(MODEL_LINE_LIMIT + 1), whole: true }] });
  const result = (await service.call('agent_chat', { message: 'One huge delta' })).body;
  t.ok(JSON.stringify(result).length < 4096, 'the answer is not the flood');
  t.equal(result.success, false);
  t.match(String(result.answer).slice(0, 600), /^RuntimeError: the model server at \S+ \(agent.backend openai\) sent a stream line longer than 16 MiB: the turn was stopped there/);
  model.reply({ items: [{ text: 'Fine again.' }] });
  t.match((await service.call('agent_chat', { message: 'Hello?', session_id: sessionOf(result) })).body, { success: true, answer: 'Fine again.' });
});

t.test("a session's stored size is capped: a full session refuses a turn and says what to do", async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ text: 'First.' }] });
  const first = await service.call('agent_chat', { message: 'Start' });
  const sessionId = sessionOf(first.body);
  const page = (await service.call('get_agent_session', { session_id: sessionId })).body.answer;
  const big = { id: 'm-big', turn_id: 't-big', created_at: new Date().toISOString(), message: { role: 'user', content: 'y'.repeat(SESSION_SIZE_LIMIT) } };
  await appendFile(messagesFile(service, sessionId), `${JSON.stringify(big)}\n`);

  const refused = await service.call('agent_chat', { message: 'More', session_id: sessionId });
  t.match(refused.body, { success: false, answer: new RegExp(`^RuntimeError: session ${sessionId} holds 32\\.0 MiB of messages, the most a session may hold \\(32 MiB\\): fork it at an earlier message \\(fork_agent_session\\) or start a new session`) });
  t.equal(model.requests.length, 1, 'no model request was made');

  const fork = await service.call('fork_agent_session', { session_id: sessionId, up_to_message_id: page.messages.at(-1)!.id });
  t.equal(fork.body.success, true, JSON.stringify(fork.body).slice(0, 300));
  model.reply({ items: [{ text: 'Forked and fine.' }] });
  t.match((await service.call('agent_chat', { message: 'More', session_id: sessionOf(fork.body) })).body, { success: true, answer: 'Forked and fine.' });
});

t.test('a line torn by an older version and joined with the next record still yields that record', async (t) => {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { SessionStore } = await import('../../supervisor/agent/session-store.js');
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-sessions-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const store = new SessionStore(workspace);
  const info = await store.create('Joined');
  const record = { id: 'm-next', turn_id: 't-2', created_at: new Date().toISOString(), message: { role: 'user' as const, content: 'the message after the tear' } };
  // What the old append did: the next record written straight onto the torn tail.
  await appendFile(join(workspace, '.taskyard', 'agent', info.session_id, 'messages.jsonl'), `{"id":"m-torn","tur${JSON.stringify(record)}\n`);
  t.same(await store.records(info.session_id), [record]);
});

const KEY = 'sk-secret-key-never-shown-0123';
process.env['TASKYARD_TEST_MODEL_KEY'] = KEY;


async function sessionFiles(workspace: string, sessionId: string): Promise<string> {
  const dir = join(workspace, '.taskyard', 'agent', sessionId);
  return (await readFile(join(dir, 'info.json'), 'utf8')) + (await readFile(join(dir, 'messages.jsonl'), 'utf8'));
}

t.test('the Anthropic backend: thinking, a tool call and the answer, with the key only in the request header', async (t) => {
  const { service, model } = await startAgentService(t, { backend: 'anthropic', api_key_env: 'TASKYARD_TEST_MODEL_KEY' });
  model.reply({ items: [{ reasoning: 'Check the version.' }, { tool: 'version', input: {} }] }, { items: [{ text: 'Version known.' }] });
  const { events, raw } = await service.events('agent_chat', { message: 'Which version?' });
  t.same(patchOrderProblems(events), []);
  t.match(events.at(-1), { kind: 'result', success: true, answer: 'Version known.', metadata: { usage: { input_tokens: 22, output_tokens: 14 } } });
  t.match(drawBlocks(events).map((b) => b.type), ['text', 'thinking', 'tool', 'text']);
  t.match(drawBlocks(events)[2]!.payload, { job: 'version', response: { success: true } });
  t.equal(model.requests[0]!.path, '/v1/messages');
  t.equal(model.requests[0]!.headers['x-api-key'], KEY);
  const sent = JSON.stringify(model.requests[1]!.body['messages']);
  t.match(sent, /tool_result/, 'the tool result went back in Anthropic form');
  const sessionId = (events.at(-1)!['metadata'] as { session_id: string }).session_id;
  t.notOk(raw.includes(KEY) || (await sessionFiles(service.workspace, sessionId)).includes(KEY), 'the key is in no answer and no record');

  model.reply({ status: 401 }, { items: [{ text: 'Cut' }], breakAfter: 3 });
  const refused = await service.events('agent_chat', { message: 'Again?', session_id: sessionId });
  t.match(refused.events.at(-1), { success: false, answer: /refused the request \(HTTP 401\): check the key in the environment variable TASKYARD_TEST_MODEL_KEY/ });
  const broken = await service.events('agent_chat', { message: 'And?', session_id: sessionId });
  t.match(broken.events.at(-1), { success: false, answer: /broke off or sent an unreadable answer/ });
  t.same(patchOrderProblems(broken.events), []);
  t.match((await service.call('get_agent_session', { session_id: sessionId })).body.answer, { message_count: 7 }, 'both failed turns kept their user message, the broken one its partial answer too');
});

t.test('a 401 gives an error block and a failed result naming the key variable; the session loses nothing', async (t) => {
  const { service, model } = await startAgentService(t, { api_key_env: 'TASKYARD_TEST_MODEL_KEY' });
  model.reply({ status: 401 });
  const { events, raw } = await service.events('agent_chat', { message: 'Hello?' });
  t.same(patchOrderProblems(events), []);
  t.equal(model.requests[0]!.headers['authorization'], `Bearer ${KEY}`);
  const answer = /refused the request \(HTTP 401\): check the key in the environment variable TASKYARD_TEST_MODEL_KEY/;
  t.match(events.at(-1), { kind: 'result', success: false, answer });
  t.match(drawBlocks(events).at(-1), { type: 'error', text: answer });
  t.notOk(raw.includes(KEY));
  const sessionId = (events.at(-1)!['metadata'] as { session_id: string }).session_id;
  t.match((await service.call('get_agent_session', { session_id: sessionId })).body.answer, { message_count: 1, messages: [{ role: 'user', content: 'Hello?' }], blocks: [{ block_type: 'text' }, { block_type: 'error' }] });
  t.notOk((await sessionFiles(service.workspace, sessionId)).includes(KEY));
  model.reply({ items: [{ text: 'Back again.' }] });
  const again = await service.call('agent_chat', { message: 'Now?', session_id: sessionId });
  t.equal(again.body.answer, 'Back again.', 'the session goes on after the failure');
  t.same((model.requests[1]!.body['messages'] as Array<{ content: string }>).slice(1).map((m) => m.content), ['Hello?', 'Now?']);
});

t.test('a model server that is down, and one that breaks its stream', async (t) => {
  const port = await closedPort();
  const { service } = await startAgentService(t, { base_url: `http://127.0.0.1:${port}/v1` });
  const down = await service.events('agent_chat', { message: 'Anyone?' });
  t.same(patchOrderProblems(down.events), []);
  t.match(down.events.at(-1), { kind: 'result', success: false, answer: new RegExp(`^RuntimeError: cannot reach the model server at http://127.0.0.1:${port}/v1 .*ECONNREFUSED.*check agent.base_url`) });
  t.match(drawBlocks(down.events).at(-1), { type: 'error' });

  const { service: other, model } = await startAgentService(t);
  model.reply({ items: [{ text: 'This answer breaks off in the middle' }], breakAfter: 4 });
  const broken = await other.events('agent_chat', { message: 'Talk' });
  t.same(patchOrderProblems(broken.events), []);
  t.match(broken.events.at(-1), { kind: 'result', success: false, answer: /^RuntimeError: the model server at .* broke off or sent an unreadable answer/ });
  const sessionId = (broken.events.at(-1)!['metadata'] as { session_id: string }).session_id;
  const got = (await other.call('get_agent_session', { session_id: sessionId })).body.answer;
  t.same(got.messages.map((m) => m.role), ['user', 'assistant'], 'the user message and the partial answer are kept');
  t.match(JSON.stringify(got.messages[1]!.content), /This answ/);
});

t.test('an unset key variable is a business failure that says which variable to set', async (t) => {
  const { service } = await startAgentService(t, { api_key_env: 'TASKYARD_TEST_UNSET_KEY' });
  const { body } = await service.call('agent_chat', { message: 'hi' });
  t.match(body, { success: false, answer: /^RuntimeError: the environment variable TASKYARD_TEST_UNSET_KEY \(named by agent.api_key_env\) is not set/ });
});
