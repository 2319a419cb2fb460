/**
 * Bench helper run as its own process (so the client does not share the service's event loop):
 * `node upload-client.js <url> <token> <bytes>` uploads `bytes` bytes to `POST /files` in 1 MiB
 * writes and prints `{"ms": <wall time>, "path": <staged path>}`.
 */
import { request } from 'node:http';

const MiB = 1024 * 1024;

function upload(url: string, token: string, data: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-file-name': 'blob.bin', 'content-length': data.length },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve((JSON.parse(text) as { answer: { path: string } }).answer.path) : reject(new Error(text))));
    });
    req.on('error', reject);
    (async () => {
      for (let at = 0; at < data.length; at += MiB) {
        if (!req.write(data.subarray(at, at + MiB))) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch(reject);
  });
}

const [url, token, bytes] = process.argv.slice(2);
const data = Buffer.alloc(Number(bytes));
for (let i = 0; i + 4 <= data.length; i += 4096) data.writeUInt32LE(i, i);
const start = performance.now();
const path = await upload(url!, token!, data);
process.stdout.write(JSON.stringify({ ms: performance.now() - start, path }));
