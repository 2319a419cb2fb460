// A hostile target for the forwarding bench: every `/events` call gets an event stream of empty
// `data:` lines (6 bytes each on the wire, one event that never ends) until argv[2] MB are sent
// or the caller hangs up; then prints `SENT <bytes>` on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const limit = Number(process.argv[2] ?? 500) * 1_000_000;
const piece = Buffer.from('data:\n'.repeat(64 * 1024));
const server = createServer(async (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sent = 0;
  while (!res.destroyed && sent < limit) {
    sent += piece.length;
    if (!res.write(piece)) await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done).off('close', done);
        resolve();
      };
      res.once('drain', done).once('close', done);
    });
  }
  res.end();
  console.log(`SENT ${sent}`);
});
server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
