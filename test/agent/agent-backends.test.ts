import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { closedPort } from '../helpers/http-server.js';
import { drawBlocks, patchOrderProblems, startAgentService } from './agent-helpers.js';
import type { AgentSessionPage } from '../../schemas/agent.js';

const KEY = 'sk-secret-key-never-shown-0123';
process.env['TASKYARD_TEST_MODEL_KEY'] = KEY;

type Info = AgentSessionPage;

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
  const got = (await other.call('get_agent_session', { session_id: sessionId })).body.answer as Info;
  t.same(got.messages.map((m) => m.role), ['user', 'assistant'], 'the user message and the partial answer are kept');
  t.match(JSON.stringify(got.messages[1]!.content), /This answ/);
});

t.test('an unset key variable is a business failure that says which variable to set', async (t) => {
  const { service } = await startAgentService(t, { api_key_env: 'TASKYARD_TEST_UNSET_KEY' });
  const { body } = await service.call('agent_chat', { message: 'hi' });
  t.match(body, { success: false, answer: /^RuntimeError: the environment variable TASKYARD_TEST_UNSET_KEY \(named by agent.api_key_env\) is not set/ });
});
