// Runs on every HTTP front end.
import t from 'tap';
import { createJobContext } from '../../core/job.js';
import { createSharingJobContext, emitSharedOf, type SharedWrite } from '../../core/shared-events.js';
import { chooseAdapter } from '../../protocol/adapter.js';
import { SseWriter } from '../../protocol/sse.js';
import type { StreamEvent } from '../../schemas/events.js';

/**
 * The fan-out fast path lives behind its seams, not in JobContext or BodyWriter: these check that
 * each end still finds it, since a lost capability would not change what followers receive, only
 * what it costs (every broadcast would go back to one awaited write per follower).
 */

t.test('only an SSE caller context offers the shared write; both are ordinary JobContexts', async (t) => {
  const stop = new AbortController();
  const emitShared = (): SharedWrite => 'sent';
  const plain = createJobContext(() => [stop.signal], false);
  const sharing = createSharingJobContext(() => [stop.signal], () => Promise.resolve(), emitShared);
  t.equal(emitSharedOf(plain), undefined, 'a JSON or MCP caller has none');
  t.equal(emitSharedOf(sharing), emitShared, 'an SSE caller has the one its route gave');
  t.equal(sharing.streaming, true);
  t.equal(sharing.signal.aborted, false);
  stop.abort();
  t.equal(sharing.signal.aborted, true, 'its signal follows its sources');
});

t.test('the front end takes shared writes on an SSE stream, and the client reads them in order', async (t) => {
  const progress = (name: string): StreamEvent => ({ kind: 'progress', name, started_at: 'now', finished_at: null, percentage: null });
  const batches = [[progress('a')], [progress('b'), progress('c')]];
  const answers: SharedWrite[] = [];
  const server = await chooseAdapter().listen('127.0.0.1', 0, async (_req, res) => {
    const sse = new SseWriter(res);
    for (const batch of batches) answers.push(sse.sendShared(batch));
    await sse.finish({ kind: 'result', answer: 'done', success: true, metadata: {} });
  });
  t.teardown(() => server.close());
  const text = await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
  t.same(answers, ['sent', 'sent'], 'each batch written at once, without a promise');
  const kinds = text.split('\n\n').filter(Boolean).map((frame) => (JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as { kind: string; name?: string }).name ?? 'result');
  t.same(kinds, ['a', 'b', 'c', 'result']);
});
