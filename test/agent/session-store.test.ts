import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { SessionRecord } from '../../schemas/agent.js';
import { blocksOf, pageOf } from '../../supervisor/agent/session-blocks.js';
import { SessionStore } from '../../supervisor/agent/session-store.js';

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
