// The floor: a uWebSockets.js hello-world answering every request with a small JSON body, or
// with the bytes of the file named by argv[2] (the floor of a large answer), ready in memory.
import { readFileSync } from 'node:fs';
import { loadNativeUws } from '../../protocol/uws-native.js';

const uws = loadNativeUws();
if (uws instanceof Error) throw uws;
const file = process.argv[2];
const body = file ? readFileSync(file) : JSON.stringify({ answer: { running: true }, success: true, metadata: {} });
uws
  .App()
  .any('/*', (res) => {
    res.onAborted(() => undefined);
    res.onData(() => undefined);
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body));
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('listen failed');
    console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
  });
