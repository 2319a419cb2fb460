import t from 'tap';
import { makeWorkspace, startTaskService, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

const UNIT = 'é€😀a'; // 2 + 3 + 4 + 1 bytes
const REPEAT = 500;


t.test('read_task_log windows never split a UTF-8 character', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'echo-log', text: UNIT, repeat: REPEAT });
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded');
  const full = UNIT.repeat(REPEAT);
  const size = Buffer.byteLength(full);
  const read = async (args: Record<string, unknown>) => (await svc.call('read_task_log', { task_id: handle.task_id, ...args })).body.answer;

  let offset = 0;
  let text = '';
  let reads = 0;
  for (;;) {
    const chunk = await read({ offset, limit: 1024 });
    t.equal(chunk.start_offset, offset, 'windows are contiguous');
    t.ok(chunk.next_offset - chunk.start_offset <= 1024, 'within the limit');
    t.notOk(chunk.content.includes('\uFFFD'), 'no broken character');
    t.equal(Buffer.byteLength(chunk.content), chunk.next_offset - chunk.start_offset, 'offsets are bytes');
    text += chunk.content;
    offset = chunk.next_offset;
    reads++;
    if (!chunk.has_more_after) break;
  }
  t.equal(text, full, 'the windows add up to the whole log');
  t.ok(reads >= 5, `read in ${reads} windows`);

  const inside = await read({ offset: 1, limit: 1024 });
  t.equal(inside.start_offset, 2, 'a start inside a character moves to the next one');
  t.ok(inside.content.startsWith('€'));
  const tail = await read({});
  t.equal(tail.next_offset, size);
  t.equal(tail.file_size, size);
  t.equal(tail.has_more_before, false, 'default window covers this log');
  const smallTail = await read({ offset: -1, limit: 1024 });
  t.ok(smallTail.start_offset >= size - 1024 && smallTail.has_more_before);
  t.notOk(smallTail.content.includes('\uFFFD'));
  const past = await read({ offset: size + 10, limit: 1024 });
  t.equal(past.reset, true, 'an offset past the end means the log was reset');
  t.equal(past.start_offset, 0);
  const unknown = await svc.call('read_task_log', { task_id: 'fixture#echo-log#nothing' });
  t.match(unknown.body.answer, /^KeyError: /);
});

t.test('stream_task over SSE: progress and log events as they happen, then the terminal status', async (t) => {
  const svc = await startTaskService(t);
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 0.6, steps: 3 });
  const sse = await svc.events('stream_task', { task_id: handle.task_id });
  const kinds = sse.events.map((e) => e['kind']);
  t.equal(kinds.at(-1), 'result');
  const logs = sse.events.filter((e) => e['kind'] === 'log');
  const text = logs.map((e) => e['content']).join('');
  t.match(text, /step 1\/3[\s\S]*step 2\/3[\s\S]*step 3\/3/, 'every log line arrives');
  for (const [i, e] of logs.entries()) {
    t.equal(e['channel'], 'task');
    if (i > 0) t.equal(e['start_offset'], logs[i - 1]!['next_offset'], 'log events are contiguous');
  }
  const progress = sse.events.filter((e) => e['kind'] === 'progress');
  t.ok(progress.length >= 2, 'progress events');
  t.equal(progress.at(-1)!['percentage'], 100, 'the last progress value is recorded');
  t.ok(progress.every((p) => p['name'] === 'sleep'));
  const result = sse.events.at(-1)!;
  t.equal(result['success'], true);
  t.equal(sse.result!.answer.state, 'succeeded');

  const replay = await svc.events('stream_task', { task_id: handle.task_id });
  t.same(replay.events.filter((e) => e['kind'] === 'log').map((e) => e['content']).join(''), text, 'a finished Task replays its log');
  t.same(replay.events.at(-1), result);
  const json = await svc.call('stream_task', { task_id: handle.task_id, poll_interval: 0.1 });
  t.same(json.body.answer, result['answer'], 'the ordinary call answers the same terminal status');
  const unknown = await svc.events('stream_task', { task_id: 'base#sleep#none' });
  t.match(unknown.events.at(-1)!['answer'], /^KeyError: /);
});
