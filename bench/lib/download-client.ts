/**
 * Bench helper run as its own process (so the client does not share the service's event loop):
 * `node download-client.js <port> <token> <path> <parallel>` runs `parallel` downloads of
 * `GET /files?path=<path>` at once on raw sockets, drops the bytes, and prints
 * `{"ms": <wall time>, "bytes": <body bytes received in all>}`.
 */
import { connect } from 'node:net';

function download(port: number, token: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    let need = -1;
    let got = 0;
    socket.on('data', (chunk: Buffer) => {
      if (need < 0) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end === -1) return;
        const text = head.subarray(0, end).toString('latin1');
        if (!text.startsWith('HTTP/1.1 200')) return reject(new Error(text.split('\r\n')[0]));
        need = Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? NaN);
        got = head.length - end - 4;
      } else got += chunk.length;
      if (got >= need) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.write(`GET /files?path=${encodeURIComponent(path)} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n\r\n`);
  });
}

const [port, token, path, parallel = '1'] = process.argv.slice(2);
const start = performance.now();
const sizes = await Promise.all(Array.from({ length: Number(parallel) }, () => download(Number(port), token!, path!)));
process.stdout.write(JSON.stringify({ ms: performance.now() - start, bytes: sizes.reduce((a, b) => a + b, 0) }));
