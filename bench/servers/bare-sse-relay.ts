// The floor of forwarding event streams: a uWebSockets.js server whose POSTs each open one event
// stream on the target at 127.0.0.1:<argv[2]> (a raw socket read into one static buffer), look for event
// boundaries (a blank line, LF LF) with indexOf only, count each event's bytes, and discard them;
// an event past 32 MiB ends the caller's stream with an `oversized event` result, as the service
// does. `GET /health` answers at once. No JSON, no line parsing, no backpressure, no limits on
// anything else: whatever a real relay of event streams does costs more than this.
import { connect } from 'node:net';
import { loadNativeUws } from '../../protocol/uws-native.js';

const uws = loadNativeUws();
if (uws instanceof Error) throw uws;
const port = Number(process.argv[2]);
const MAX_EVENT_BYTES = 32 * 1024 * 1024;
const body = '{"arguments":{}}';
const request = `POST /jobs/anything/events HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
const LF = 10;
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);

uws
  .App()
  .get('/health', (res) => void res.cork(() => res.writeHeader('content-type', 'application/json').end('{"status":"ok"}')))
  .post('/*', (res) => {
    let open = true;
    let eventBytes = 0;
    let lastByte = -1;
    // Reads land in one static buffer and are scanned there (net's `onread`): no buffer per read, no copy.
    const upstream = connect({
      port,
      host: '127.0.0.1',
      onread: {
        buffer: READ_BUFFER,
        callback: (n: number) => {
          // The last boundary in the read (one spanning two reads included): the bytes after it belong to the open event.
          let boundary = n >= 2 ? READ_BUFFER.lastIndexOf('\n\n', n - 2) : -1;
          if (boundary === -1 && lastByte === LF && READ_BUFFER[0] === LF) boundary = 0;
          eventBytes = boundary === -1 ? eventBytes + n : n - boundary - 2;
          lastByte = READ_BUFFER[n - 1]!;
          if (eventBytes > MAX_EVENT_BYTES) finish('data: {"kind":"result","success":false,"answer":"oversized event"}\n\n');
          return true;
        },
      },
    });
    upstream.on('connect', () => upstream.write(request));
    const finish = (text: string) => {
      upstream.destroy();
      if (open) res.cork(() => res.end(text));
      open = false;
    };
    res.onAborted(() => {
      open = false;
      upstream.destroy();
    });
    res.onData(() => undefined);
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').write(': relaying\n\n'));
    upstream.on('error', () => finish(''));
    upstream.on('end', () => finish(''));
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('listen failed');
    console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
  });
