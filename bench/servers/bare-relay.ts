// The floor of forwarding: a uWebSockets.js server that relays every request, as a fixed
// `POST /jobs/<argv[3]>` with body `{"arguments":{}}`, to 127.0.0.1:<argv[2]> over kept-alive raw
// sockets (bearer argv[4]) and answers with the target's body. No JSON parsing, no checks, no
// abort handling, no limits: whatever a real forwarder does costs more than this.
import { connect, type Socket } from 'node:net';
import { loadNativeUws } from '../../protocol/uws-native.js';

const uws = loadNativeUws();
if (uws instanceof Error) throw uws;
const [port, job, token] = [Number(process.argv[2]), process.argv[3] ?? 'version', process.argv[4] ?? ''];
const body = '{"arguments":{}}';
const request = Buffer.from(
  `POST /jobs/${job} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
);

/** A kept-alive connection to the target answering one request at a time (Content-Length framed). */
class Upstream {
  readonly socket: Socket = connect(port, '127.0.0.1');
  #buffer: Buffer = Buffer.alloc(0);
  #done: ((body: Buffer) => void) | undefined;

  constructor() {
    this.socket.setNoDelay(true);
    // The target closes idle keep-alive connections (uWS: after 10 s): forget this one, and send
    // a request it was carrying again on a new one.
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      const at = idle.indexOf(this);
      if (at !== -1) idle.splice(at, 1);
      const done = this.#done;
      this.#done = undefined;
      if (done) new Upstream().send(done);
    });
    this.socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
      const headEnd = this.#buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(this.#buffer.toString('latin1', 0, headEnd))?.[1]);
      if (this.#buffer.length < headEnd + 4 + length) return;
      const answer = this.#buffer.subarray(headEnd + 4, headEnd + 4 + length);
      this.#buffer = Buffer.alloc(0);
      const done = this.#done!;
      this.#done = undefined;
      idle.push(this);
      done(answer);
    });
  }

  send(onAnswer: (body: Buffer) => void): void {
    this.#done = onAnswer;
    this.socket.write(request);
  }
}

const idle: Upstream[] = [];
uws
  .App()
  .any('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    res.onData((_chunk, last) => {
      if (!last) return;
      const upstream = idle.pop() ?? new Upstream();
      upstream.send((answer) => {
        if (!aborted) res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(answer));
      });
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('listen failed');
    console.log(`LISTENING ${uws.us_socket_local_port(socket as never)}`);
  });
