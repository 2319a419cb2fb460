// The floor for followers of a big log (bench/memory.ts): a bare uWebSockets.js server that does
// only what the spec asks of a `stream_task` follower. `GET /health` answers a small JSON body;
// any POST follows the log file named by argv[2] from its start until it holds argv[3] bytes, then
// ends with a `result` frame. Each follower reads the log in 64 KiB windows (cut on UTF-8
// boundaries), frames each as the service's SSE `log` event (same fields, JSON escaping
// included), and writes it with backpressure: one window per follower per event-loop turn, the
// next once the socket took the last. A whole window is framed once and shared by the followers
// at its offset (the 4 latest kept); growth is noticed by `fs.watch`, as the service does.
import { readSync, openSync, fstatSync, watch } from 'node:fs';
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { loadNativeUws } from '../../protocol/uws-native.js';
import { isUtf8Continuation, utf8SafeLength } from '../../core/utf8-cut.js';
import { CORK_PIECE } from '../../protocol/uws-chunks.js';

const WINDOW = 65536;
const KEPT = 4;
const file = process.argv[2]!;
const end = Number(process.argv[3]);
const uws = loadNativeUws();
if (uws instanceof Error) throw uws;

const fd = openSync(file, 'r');
let size = 0;
const scratch = Buffer.allocUnsafe(WINDOW + 3);
/** Frames of whole windows by offset: they never change, and followers at one offset share them. */
const frames = new Map<number, { bytes: Buffer; next: number }>();
const waiting = new Set<() => void>();

function refresh(): void {
  const now = fstatSync(fd).size;
  if (now === size) return;
  size = now;
  const woken = [...waiting];
  waiting.clear();
  for (const wake of woken) wake();
}
watch(file, refresh);
setInterval(refresh, 1000).unref();

/** The framed window at `offset` (whole windows shared, a partial last one made afresh). */
function frameAt(offset: number): { bytes: Buffer; next: number } {
  const kept = frames.get(offset);
  if (kept) return kept;
  const read = readSync(fd, scratch, 0, Math.min(WINDOW + 3, size - offset), offset);
  let skip = 0;
  while (skip < Math.min(3, read) && isUtf8Continuation(scratch[skip]!)) skip++;
  const view = scratch.subarray(skip, Math.min(read, skip + WINDOW));
  const length = utf8SafeLength(view);
  const start = offset + skip;
  const next = start + length;
  const event = { kind: 'log', content: view.toString('utf8', 0, length), start_offset: start, next_offset: next, file_size: size, has_more_before: start > 0, has_more_after: next < size, reset: false, channel: 'task' };
  const framed = { bytes: Buffer.from(`event: log\ndata: ${JSON.stringify(event)}\n\n`), next };
  if (length === WINDOW) {
    frames.set(offset, framed);
    if (frames.size > KEPT) frames.delete(frames.keys().next().value!);
  }
  return framed;
}

function follow(res: HttpResponse, state: { offset: number; gone: boolean }): void {
  if (state.gone) return;
  if (state.offset >= size) {
    if (size >= end) res.cork(() => res.end('event: result\ndata: {"kind":"result"}\n\n'));
    else waiting.add(() => follow(res, state));
    return;
  }
  const { bytes, next } = frameAt(state.offset);
  state.offset = next;
  let taken = true;
  // One cork per CORK_PIECE, as the service writes: a write that overflows uWS's cork buffer can
  // lose its data in this build when the socket fills (protocol/uws-chunks.ts).
  for (let at = 0; at < bytes.byteLength; at += CORK_PIECE) {
    const piece = bytes.subarray(at, at + CORK_PIECE);
    res.cork(() => (taken = res.write(piece) && taken));
  }
  if (taken) return void setImmediate(() => follow(res, state));
  // As the service's front end does (protocol/uws-socket.ts): an empty cork sends what uWS
  // buffered, and a write after a short wait stands in for an onWritable this build can miss.
  let waited = false;
  const go = () => {
    if (waited) return;
    waited = true;
    clearTimeout(timer);
    follow(res, state);
  };
  const timer = setTimeout(go, 100);
  res.onWritable(() => {
    res.cork(() => {});
    go();
    return true;
  });
}

const health = JSON.stringify({ answer: { running: true }, success: true, metadata: {} });
uws
  .App()
  .get('/health', (res) => {
    res.onAborted(() => undefined);
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(health));
  })
  .post('/*', (res) => {
    const state = { offset: 0, gone: false };
    res.onAborted(() => (state.gone = true));
    res.onData((_chunk, last) => {
      if (!last) return;
      res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream; charset=utf-8').writeHeader('cache-control', 'no-cache').write(':\n\n'));
      follow(res, state);
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('listen failed');
    console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
  });
