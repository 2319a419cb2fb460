// A target for bench/hostile-targets.ts. `/events` calls get an event stream of empty `data:`
// lines (6 bytes each on the wire, one event that never ends) until argv[2] MB are sent or the
// caller hangs up, then `SENT <bytes>` is printed on stdout. Other calls get a valid JobResponse
// of argv[3] MiB (one long string answer), as large forwarded answers are.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const limit = Number(process.argv[2] ?? 500) * 1_000_000;
const answerMiB = Number(process.argv[3] ?? 256);
const piece = Buffer.from('data:\n'.repeat(64 * 1024));
const filler = Buffer.alloc(1024 * 1024, 'x');
const head = Buffer.from('{"answer":"');
const tail = Buffer.from('","success":true,"metadata":{}}');

/** Resolves once `res` can take more, or is gone. */
const drained = (res: ServerResponse) => new Promise<void>((resolve) => {
  const done = () => {
    res.off('drain', done).off('close', done);
    resolve();
  };
  res.once('drain', done).once('close', done);
});

const server = createServer(async (req, res) => {
  req.resume();
  if (!(req.url ?? '').endsWith('/events')) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(head.length + answerMiB * filler.length + tail.length) });
    res.write(head);
    for (let i = 0; i < answerMiB && !res.destroyed; i++) if (!res.write(filler)) await drained(res);
    return void res.end(tail);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sent = 0;
  while (!res.destroyed && sent < limit) {
    sent += piece.length;
    if (!res.write(piece)) await drained(res);
  }
  res.end();
  console.log(`SENT ${sent}`);
});
server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
