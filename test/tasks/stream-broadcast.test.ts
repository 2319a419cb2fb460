// Runs on every HTTP front end.
import t, { type Test } from 'tap';
import type { TestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';
import { makeWorkspace, startTaskService, submitOk, writeFixturePlugin } from './task-helpers.js';

type Event = Record<string, unknown>;

/** An SSE `stream_task` follower that parses frames as they arrive, and can stop reading. */
function follow(svc: TestService, taskId: string) {
  const events: Event[] = [];
  let paused: Promise<void> | null = null;
  let resume = () => {};
  const done = (async () => {
    const res = await svc.fetch('/jobs/stream_task/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: taskId } }) });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      // A paused follower reads nothing: its socket fills, and the service's writes to it backpressure.
      if (paused) await paused;
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) !== -1) {
        const [eventLine, dataLine] = text.slice(0, end).split('\n');
        text = text.slice(end + 2);
        const event = JSON.parse(dataLine!.slice('data: '.length)) as Event;
        if (eventLine !== `event: ${String(event['kind'])}`) throw new Error(`event line ${eventLine} does not match ${String(event['kind'])}`);
        events.push(event);
      }
    }
    return events;
  })();
  return {
    events,
    done,
    pause: () => (paused = new Promise<void>((r) => (resume = r))),
    resume: () => {
      paused = null;
      resume();
    },
  };
}

/** A follower's log as one text, checking that its windows follow each other byte for byte. */
function logOf(t: Test, events: Event[]): string {
  const logs = events.filter((e) => e['kind'] === 'log');
  let offset = 0;
  const gaps: string[] = [];
  for (const log of logs) {
    const [start, next] = [log['start_offset'] as number, log['next_offset'] as number];
    if (start !== offset || Buffer.byteLength(log['content'] as string) !== next - start) gaps.push(`${start}..${next} after ${offset}`);
    offset = next;
  }
  t.same(gaps, [], 'each log window starts where the one before ended and holds its bytes');
  return logs.map((e) => e['content']).join('');
}

/** One service for both tests (each follows a Task of its own), with the fixture plugin installed. */
async function startShared(): Promise<TestService> {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace);
  return startTaskService(t, { workspace });
}
const shared = startShared();

t.test('a backpressured follower gets everything in order, and the others are not held back by it', async (t) => {
  const svc = await shared;
  const line = `${'x'.repeat(65_535)}\n`;
  const repeat = 240; // 15.7 MB: well beyond what the sockets of a follower that stopped reading hold
  const handle = await submitOk(t, svc, { task: 'echo-log', text: line, repeat, pause: 0.01 });
  const slow = follow(svc, handle.task_id);
  const readers = [follow(svc, handle.task_id), follow(svc, handle.task_id), follow(svc, handle.task_id)];
  await waitFor(() => slow.events.length > 0, 15_000, 'the slow follower to get its first event');
  slow.pause();
  const read = await Promise.all(readers.map((r) => r.done));
  const heldAt = slow.events.length;
  t.ok(heldAt < read[0]!.length, `the followers that read finished while the paused one held ${heldAt} of ${read[0]!.length} events`);
  slow.resume();
  const slowEvents = await slow.done;
  const full = line.repeat(repeat);
  for (const events of [...read, slowEvents]) {
    t.equal(logOf(t, events), full, 'the whole log, each byte once');
    t.equal(events.at(-1)!['kind'], 'result', 'the result comes last');
    t.equal((events.at(-1)!['answer'] as { state: string }).state, 'succeeded');
  }
});

t.test('a follower that joins between two changes gets the whole stream, like one that was there from the start', async (t) => {
  const svc = await shared;
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 1.5, steps: 6 });
  const early = follow(svc, handle.task_id);
  const alsoEarly = follow(svc, handle.task_id);
  await waitFor(() => early.events.filter((e) => e['kind'] === 'log').length >= 2, 15_000, 'two changes to reach the early followers');
  const late = follow(svc, handle.task_id);
  const [a, b, c] = await Promise.all([early.done, alsoEarly.done, late.done]);
  const progress = (events: Event[]) => events.filter((e) => e['kind'] === 'progress');
  t.match(logOf(t, a), /step 1\/6[\s\S]*step 6\/6/, 'every line');
  t.equal(logOf(t, c), logOf(t, a), 'the late follower gets the log from its start, each byte once');
  t.equal(logOf(t, b), logOf(t, a));
  t.same(progress(c), progress(a), 'and every progress event, in order');
  t.same(progress(b), progress(a));
  t.equal(progress(a).at(-1)!['percentage'], 100);
  t.same(c.at(-1), a.at(-1), 'the same result');
  for (const events of [a, b, c]) t.equal(events.filter((e) => e['kind'] === 'result').length, 1, 'one result, last');
});
