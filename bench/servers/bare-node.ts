// The common alternative: a node:http hello-world with the same body as bare-uws.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const body = JSON.stringify({ answer: { running: true }, success: true, metadata: {} });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
