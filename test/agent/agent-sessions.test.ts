import { appendFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { SessionRecord } from '../../schemas/agent.js';
import { blocksOf, pageOf } from '../../supervisor/agent/session-blocks.js';
import { SessionStore } from '../../supervisor/agent/session-store.js';
import { startModelServer } from '../../harness/model-server.js';
import { startTestService, TEST_TOKEN, waitFor } from '../helpers/service.js';
import { drawBlocks, patchOrderProblems, sharedAgentService, startAgentService } from './agent-helpers.js';

const sharedService = sharedAgentService(t);

/** The text of a stored message's content (a string, or text parts). */
function textOf(content: unknown): string {
  return typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
}


t.test('cancel mid-stream keeps what was said; a busy session refuses a second turn and a delete', async (t) => {
  const { service, model } = await startAgentService(t);
  model.reply({ items: [{ text: 'First.' }] });
  const first = await service.call('agent_chat', { message: 'Start' });
  const sessionId = (first.body.metadata as { session_id: string }).session_id;
  model.reply({ items: [{ text: 'A long answer that is never finished' }], holdAfter: 5 });
  const turn = service.events('agent_chat', { message: 'Tell me more', session_id: sessionId });
  await waitFor(() => model.holding, 10_000, 'the model to hold its stream');

  const busy = await service.call('agent_chat', { message: 'Me too', session_id: sessionId });
  t.match(busy.body, { success: false, answer: new RegExp(`^RuntimeError: session ${sessionId} is busy with turn t-\\w+: wait for it to end, or stop it with cancel_agent_turn`) });
  const refused = await service.call('delete_agent_session', { session_id: sessionId });
  t.match(refused.body, { success: false, answer: /has a running turn .*cancel_agent_turn/ });
  const listed = await service.call('list_agent_sessions');
  t.match(listed.body.answer, [{ session_id: sessionId, running: true }]);

  const cancel = await service.call('cancel_agent_turn', { session_id: sessionId });
  t.same(cancel.body.answer, true, 'this call cancelled the turn');
  const { events } = await turn;
  t.same(patchOrderProblems(events), []);
  t.match(events.at(-1), { kind: 'result', success: false, answer: /^CancelledError: the turn was cancelled/, metadata: { session_id: sessionId, status: 'cancelled' } });
  t.equal(model.abandoned, 1, 'the model stream was aborted');
  t.same((await service.call('cancel_agent_turn', { session_id: sessionId })).body.answer, false, 'an idle session: false');
  t.match((await service.call('cancel_agent_turn', { session_id: 's-unknown' })).body, { success: false, answer: /^KeyError: no agent session s-unknown/ });

  const got = (await service.call('get_agent_session', { session_id: sessionId })).body.answer;
  t.equal(got.running, false);
  const said = got.messages.map((m) => [m.role, m.content]);
  t.equal(said.length, 4);
  t.same(said[2], ['user', 'Tell me more']);
  t.match(JSON.stringify(said[3]), /A long/, 'the partial answer is kept');
  t.match(got.blocks.at(-1), { block_type: 'system', text: /cancelled/ });
  t.equal(got.message_count, 4);
});

t.test('a caller disconnecting from /events aborts the turn, which is recorded as cancelled', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ reasoning: 'Thinking hard about it' }, { text: 'never seen' }], holdAfter: 4 });
  const leave = new AbortController();
  const res = await service.fetch('/jobs/agent_chat/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { message: 'Go' } }), signal: leave.signal });
  const reader = res.body!.getReader();
  let seen = '';
  while (!seen.includes('reasoning-delta')) seen += new TextDecoder().decode((await reader.read()).value);
  const sessionId = /"session_id":"(s-\w+)"/.exec(seen)![1]!;
  await waitFor(() => model.holding, 10_000, 'the model to hold');
  leave.abort();
  await waitFor(() => model.abandoned === 1, 10_000, 'the model stream to be aborted');
  const got = await waitFor(async () => {
    const info = (await service.call('get_agent_session', { session_id: sessionId })).body.answer;
    return info.running ? null : info;
  }, 10_000, 'the turn to end');
  t.same(got.messages.map((m) => m.role), ['user', 'assistant']);
  t.match(JSON.stringify(got.messages[1]!.content), /Thinking/, 'the reasoning said so far is kept');
  t.match(got.blocks.map((b) => b.block_type), ['text', 'thinking', 'system']);
});

t.test('sessions survive a restart and continue; fork, rename, tag and delete', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-agent-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const model = await startModelServer(t);
  const config = { agent: { backend: 'openai', base_url: model.baseUrl, model: 'scripted-model', max_retries: 0 } };
  const before = await startTestService(t, { workspace, config });
  model.reply({ items: [{ text: 'Remember 42.' }] }, { items: [{ text: 'Noted twice.' }] });
  const first = await before.call('agent_chat', { message: 'Remember a number' });
  const sessionId = (first.body.metadata as { session_id: string }).session_id;
  await before.call('agent_chat', { message: 'Again', session_id: sessionId });
  await before.close();
  const files = await readdir(join(workspace, '.taskyard', 'agent', sessionId));
  t.same(files.sort(), ['info.json', 'messages.jsonl']);

  const after = await startTestService(t, { workspace, config });
  model.reply({ items: [{ text: 'It was 42.' }] });
  const resumed = await after.call('agent_chat', { message: 'Which number?', session_id: sessionId });
  t.equal(resumed.body.answer, 'It was 42.');
  const history = model.requests[2]!.body['messages'] as Array<{ role: string; content: string }>;
  t.same(history.slice(1).map((m) => m.content), ['Remember a number', 'Remember 42.', 'Again', 'Noted twice.', 'Which number?']);

  const got = (await after.call('get_agent_session', { session_id: sessionId, limit: 2, offset: 1 })).body.answer;
  t.equal(got.message_count, 6);
  t.same(got.messages.map((m) => textOf(m.content)), ['Remember 42.', 'Again']);
  const upTo = got.messages[0]!.id;
  const fork = (await after.call('fork_agent_session', { session_id: sessionId, up_to_message_id: upTo, title: 'Branch' })).body;
  t.match(fork, { success: true, answer: { title: 'Branch', message_count: 2, forked_from: sessionId } });
  const forkId = fork.answer.session_id;
  t.not(forkId, sessionId);
  model.reply({ items: [{ text: 'On the branch.' }] });
  await after.call('agent_chat', { message: 'Branch off', session_id: forkId });
  const branchHistory = model.requests[3]!.body['messages'] as Array<{ content: string }>;
  t.same(branchHistory.slice(1).map((m) => m.content), ['Remember a number', 'Remember 42.', 'Branch off'], 'the fork continues from the chosen message');
  t.match((await after.call('fork_agent_session', { session_id: sessionId, up_to_message_id: 'm-none' })).body, { success: false, answer: /^KeyError: session .* has no message m-none/ });

  t.match((await after.call('rename_agent_session', { session_id: sessionId, title: 'Numbers' })).body.answer, { title: 'Numbers', message_count: 6 });
  t.match((await after.call('tag_agent_session', { session_id: sessionId, tag: 'memory' })).body.answer, { tag: 'memory', title: 'Numbers' });
  t.match((await after.call('tag_agent_session', { session_id: sessionId, tag: null })).body.answer, { tag: null });
  const list = (await after.call('list_agent_sessions')).body;
  t.match(list, { answer: [{ session_id: sessionId }, { session_id: forkId }], metadata: { total: 2 } }, 'newest activity first');
  t.same((await after.call('list_agent_sessions', { limit: 1, offset: 1 })).body.answer, [list.answer[1]]);

  t.same((await after.call('delete_agent_session', { session_id: forkId })).body.answer, true);
  t.match((await after.call('get_agent_session', { session_id: forkId })).body, { success: false, answer: /^KeyError: no agent session/ });
  t.match((await after.call('get_agent_session', { session_id: '../escape' })), { status: 422 }, 'a session id cannot name a path');
  const raw = await readFile(join(workspace, '.taskyard', 'agent', sessionId, 'messages.jsonl'), 'utf8');
  t.equal(raw.trim().split('\n').length, 9, 'six messages and three turn ends, one JSON line each');
  t.ok(TEST_TOKEN && !raw.includes(TEST_TOKEN));
});

t.test('a thinking block is drawn folded from reasoning deltas', async (t) => {
  const { service, model } = await sharedService();
  model.reply({ items: [{ reasoning: 'Step one, step two.' }, { text: 'Done.' }] });
  const { events } = await service.events('agent_chat', { message: 'Think' });
  t.same(patchOrderProblems(events), []);
  t.match(drawBlocks(events).map((b) => [b.type, b.text]), [['text', 'Think'], ['thinking', 'Step one, step two.'], ['text', 'Done.']]);
  t.ok(events.some((e) => e['type_name'] === 'reasoning-delta'));
});

t.test('cancel stops a running tool call too (wait_task on a long Task), and the Task is left alone', async (t) => {
  const { service, model } = await startAgentService(t, { tools: ['wait_task', 'status'] });
  const handle = (await service.call('submit', { task: 'sleep', seconds: 60 })).body.answer;
  model.reply({ items: [{ tool: 'wait_task', input: { task_id: handle.task_id, run_id: handle.run_id } }] });
  model.reply({ items: [{ text: 'unused' }] });
  const first = service.events('agent_chat', { message: 'Wait for it' });
  const listed = await waitFor(async () => {
    const sessions = (await service.call('list_agent_sessions')).body.answer;
    return sessions.find((s) => s.running);
  }, 10_000, 'the turn to run');
  await waitFor(() => model.requests.length === 1, 10_000, 'the model to ask for wait_task');
  t.same((await service.call('cancel_agent_turn', { session_id: listed.session_id })).body.answer, true);
  const { events } = await first;
  t.match(events.at(-1), { kind: 'result', success: false, answer: /^CancelledError/ });
  t.same(patchOrderProblems(events), []);
  t.equal(model.requests.length, 1, 'the model was not asked again');
  // The Task has not ended, so the turn did not wait for wait_task to answer; nor was it cancelled.
  t.match((await service.call('status', { task_id: handle.task_id })).body.answer, { state: /^(queued|running)$/ }, 'cancelling a turn neither waits for nor cancels the Task');
  await service.call('cancel', { task_id: handle.task_id });
});

const at = '2026-01-01T00:00:00.000Z';
const msg = (id: string, turn: string, role: 'user' | 'assistant' | 'tool', content: unknown): SessionRecord => ({ id, turn_id: turn, created_at: at, message: { role, content } });
const end = (id: string, turn: string, status: 'completed' | 'failed' | 'cancelled', error: string | null = null): SessionRecord => ({ id, turn_id: turn, created_at: at, turn: { status, usage: { input_tokens: 1, output_tokens: 1 }, error } });

const TURN_WITH_TOOL: SessionRecord[] = [
  msg('m1', 't1', 'user', 'What runs?'),
  msg('m2', 't1', 'assistant', [{ type: 'reasoning', text: 'look' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'status', input: { task_id: 'x' } }]),
  msg('m3', 't1', 'tool', [{ type: 'tool-result', toolCallId: 'c1', toolName: 'status', output: { type: 'json', value: { answer: 'KeyError: x', success: false, metadata: {} } } }]),
  msg('m4', 't1', 'assistant', [{ type: 'text', text: 'Nothing.' }]),
  end('e1', 't1', 'completed'),
  msg('m5', 't2', 'user', 'Again'),
  end('e2', 't2', 'failed', 'cannot reach the model server'),
];

t.test('blocks redraw stored messages: thinking, a tool call with its JobResponse, texts and a failed turn', async (t) => {
  t.same(blocksOf(TURN_WITH_TOOL).map((b) => [b.block_type, b.text]), [
    ['text', 'What runs?'], ['thinking', 'look'], ['tool', ''], ['error', 'status failed: KeyError: x'], ['text', 'Nothing.'], ['text', 'Again'], ['error', 'cannot reach the model server'],
  ]);
  t.match(blocksOf(TURN_WITH_TOOL)[2]!.payload, { job: 'status', arguments: { task_id: 'x' }, response: { answer: 'KeyError: x', success: false } });
});

t.test('a page counts messages and keeps the turn ends that follow its messages', async (t) => {
  t.same(pageOf(TURN_WITH_TOOL, 3, 2).map((r) => r.id), ['m4', 'e1', 'm5', 'e2']);
  t.same(pageOf(TURN_WITH_TOOL, 0, 1).map((r) => r.id), ['m1']);
  t.same(pageOf(TURN_WITH_TOOL, 9, 5), []);
});

t.test('the store: a fork after a tool call keeps its results, a torn last line is skipped, updates do not lose each other', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-sessions-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const store = new SessionStore(workspace);
  const info = await store.create('A title longer than sixty characters is cut to keep the list readable, here');
  t.equal(info.title.length, 60);
  await Promise.all([store.append(info.session_id, TURN_WITH_TOOL), store.update(info.session_id, () => ({ title: 'Renamed' })), store.update(info.session_id, () => ({ tag: 'x' }))]);
  t.match(await store.info(info.session_id), { title: 'Renamed', tag: 'x', message_count: 5 }, 'the count, the title and the tag all survived');

  const fork = await store.fork(info.session_id, 'm2', undefined);
  t.same((await store.records(fork.session_id)).map((r) => r.id), ['m1', 'm2', 'm3'], 'the tool result came along with its call');
  t.match(fork, { title: 'Renamed (fork)', forked_from: info.session_id, message_count: 3 });

  await appendFile(join(workspace, '.taskyard', 'agent', info.session_id, 'messages.jsonl'), '{"id":"m6","turn');
  t.equal((await store.records(info.session_id)).length, TURN_WITH_TOOL.length, 'a torn last line (a crash mid-append) is skipped');
  t.same((await store.list()).map((s) => s.session_id).sort(), [info.session_id, fork.session_id].sort());
  await store.delete(fork.session_id);
  await t.rejects(store.info(fork.session_id), { name: 'KeyError' });
});
