// The floor for SSE followers: a bare uWebSockets.js server with the phasing of the follower
// bench. `POST /jobs/stream_task/events` with `{"arguments":{"task_id":…}}` follows one of ten
// "Tasks" that each, every STEP_MS, log a line stamped like a Task logger's and report progress
// 100 ms later (as a sleep Task's runner does). Each event is serialized once and written to
// every follower with one corked write. The ten lines of a step are stamped at one instant, before
// any is written, as ten runners ticking together stamp theirs (the service's Tasks are submitted
// together): a stamp taken per Task after the previous Tasks' writes would leave out of the delay
// the time a follower waits behind the other Tasks' followers.
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { loadNativeUws } from '../../protocol/uws-native.js';

const STEP_MS = Number(process.env['BARE_SSE_STEP_MS'] ?? 500);
/** The runner's progress coalescing (runner/status-publisher.ts). */
const PROGRESS_DELAY_MS = 100;
const uws = loadNativeUws();
if (uws instanceof Error) throw uws;

const followers = new Map<string, Set<HttpResponse>>();
let step = 0;
let offset = 0;

/** Every follower of a Task gets the same bytes, in one corked write each. */
function broadcast(set: Set<HttpResponse>, bytes: Buffer): void {
  for (const res of set) res.cork(() => res.write(bytes));
}

setInterval(() => {
  step++;
  const at = new Date().toISOString();
  for (const set of followers.values()) {
    const line = `${at} INFO step ${step}\n`;
    const log = JSON.stringify({ kind: 'log', content: line, offset, next_offset: offset + line.length, size: offset + line.length, reset: false, channel: 'task' });
    const progress = JSON.stringify({ kind: 'progress', name: 'sleep', started_at: at, finished_at: null, percentage: step % 100 });
    broadcast(set, Buffer.from(`event: log\ndata: ${log}\n\n`));
    // A Task runner writes progress up to PROGRESS_DELAY_MS after the log line (it coalesces them).
    setTimeout(() => broadcast(set, Buffer.from(`event: progress\ndata: ${progress}\n\n`)), PROGRESS_DELAY_MS);
  }
  offset += 40;
}, STEP_MS);

uws
  .App()
  .post('/*', (res) => {
    let set: Set<HttpResponse> | undefined;
    res.onAborted(() => set?.delete(res));
    let body = '';
    res.onData((chunk, last) => {
      body += Buffer.from(chunk).toString();
      if (!last) return;
      const taskId = (JSON.parse(body) as { arguments: { task_id: string } }).arguments.task_id;
      set = followers.get(taskId) ?? new Set();
      followers.set(taskId, set);
      set.add(res);
      res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream; charset=utf-8').writeHeader('cache-control', 'no-cache').write(':\n\n'));
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('listen failed');
    console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
  });
