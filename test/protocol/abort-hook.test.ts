import t from 'tap';
import { AbortPoint, hookOf } from '../../protocol/abort-hook.js';

t.test('an AbortPoint calls each listener once, with its reason, and never after unlisten', (t) => {
  const point = new AbortPoint();
  const heard: string[] = [];
  const first = () => heard.push(`first:${String(point.reason)}`);
  const second = () => heard.push('second');
  point.listen(first);
  point.listen(second);
  point.unlisten(second);
  t.equal(point.aborted, false);
  point.abort('gone');
  point.abort('again');
  t.same(heard, ['first:gone'], 'one call, the first reason; the removed listener is not called');
  t.equal(point.aborted, true);
  point.listen(() => heard.push('late'));
  t.same(heard, ['first:gone'], 'a listener added once aborted is not called (callers check `aborted` first)');
  t.end();
});

t.test('hookOf follows its AbortSignal', (t) => {
  const controller = new AbortController();
  const hook = hookOf(controller.signal);
  let calls = 0;
  const onAbort = () => calls++;
  hook.listen(onAbort);
  hook.unlisten(onAbort);
  hook.listen(() => calls += 10);
  t.equal(hook.aborted, false);
  controller.abort(new Error('left'));
  t.equal(calls, 10, 'only the listener still there is called');
  t.equal(hook.aborted, true);
  t.equal((hook.reason as Error).message, 'left');
  t.end();
});
