// The floor for downloads: bare servers that answer every request with one file, nothing else.
// `node bare-files.js node|uws FILE`: node:http piping a read stream (1 MiB reads), or uWS
// writing 4 MiB reads with tryEnd and onWritable, the best each reached by hand on this machine.
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadNativeUws } from '../../protocol/uws-native.js';

const [kind, file] = process.argv.slice(2) as ['node' | 'uws', string];
const size = statSync(file).size;

if (kind === 'node') {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
} else {
  const uws = loadNativeUws();
  if (uws instanceof Error) throw uws;
  const chunk = Buffer.allocUnsafeSlow(4 * 1024 * 1024);
  uws
    .App()
    .any('/*', (res) => {
      const fd = openSync(file, 'r');
      let read = 0;
      let aborted = false;
      res.onAborted(() => (aborted = true));
      res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/octet-stream'));
      // As uWS's own VideoStreamer example: what tryEnd could not take is retried on onWritable.
      const send = (view: Buffer): boolean => {
        const before = res.getWriteOffset();
        let ok = false;
        let done = false;
        res.cork(() => ([ok, done] = res.tryEnd(view, size)));
        if (done || aborted) return closeSync(fd), true;
        if (ok) return false;
        res.onWritable((offset) => {
          let retried = false;
          res.cork(() => ([retried, done] = res.tryEnd(view.subarray(offset - before), size)));
          if (done) closeSync(fd);
          else if (retried) setImmediate(next);
          return retried;
        });
        return true;
      };
      const next = (): void => {
        while (!aborted && read < size) {
          const length = readSync(fd, chunk, 0, Math.min(chunk.length, size - read), read);
          read += length;
          if (send(chunk.subarray(0, length))) return;
        }
      };
      next();
    })
    .listen('127.0.0.1', 0, (socket) => {
      if (!socket) throw new Error('listen failed');
      console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
    });
}
