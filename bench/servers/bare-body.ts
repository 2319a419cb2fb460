// The floor of a large answer: a uWebSockets.js server answering every request with the bytes of one file (argv[2]), ready in memory.
import { readFileSync } from 'node:fs';
import { loadNativeUws } from '../../protocol/uws-adapter.js';

const uws = loadNativeUws();
if (uws instanceof Error) throw uws;
const body = readFileSync(process.argv[2]!);
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
