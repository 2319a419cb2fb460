// Runs on every HTTP front end.
import { connect } from 'node:net';
import t from 'tap';
import { startPlainServer } from '../../harness/http-server.js';
import { startTestService, TEST_TOKEN } from '../helpers/service.js';

/** Everything the service sent on one connection, and whether it closed the connection itself. */
interface Conversation {
  text: string;
  closedByService: boolean;
}

/**
 * Writes `bytes` on a fresh connection and collects every byte the service sends until it closes
 * the connection, or until `waitMs` passes (then the connection was left open: closedByService false).
 */
function converse(url: string, bytes: string, waitMs = 3000): Promise<Conversation> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let closedByService = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(received).toString('latin1'), closedByService });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('end', () => (closedByService = true));
    socket.on('close', () => {
      closedByService = true;
      finish();
    });
    socket.write(bytes);
  });
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

const FRAMINGS = {
  'two Content-Length headers': 'content-length: 2\r\ncontent-length: 40\r\n',
  'Content-Length repeated with the same value': 'content-length: 2\r\ncontent-length: 2\r\n',
  'Transfer-Encoding beside Content-Length': 'content-length: 2\r\ntransfer-encoding: chunked\r\n',
};
const PATHS = ['/jobs/version', '/proxy/up/anything'];

/** A request whose body is framed two ways; `hidden` follows the shorter framing in the same packet. */
function ambiguous(path: string, framing: string, hidden = ''): string {
  return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_TOKEN}\r\ncontent-type: application/json\r\n${framing}\r\n{}${hidden}`;
}

// One upstream and one service for both tests: each asks that nothing ever reached the upstream,
// which holds for the two together as for each alone.
const upstream = await startPlainServer(t, (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('upstream'));
const svc = await startTestService(t, { config: { proxy: { up: { url: upstream.url } } } });

t.test('ambiguous body framing gets a 400 and a closed connection, on every route', async (t) => {
  for (const [what, framing] of Object.entries(FRAMINGS)) {
    for (const path of PATHS) {
      const { text, closedByService } = await converse(svc.url, ambiguous(path, framing));
      t.ok(closedByService, `${what} on ${path}: the service closes the connection`);
      // uWS's own parser refuses Transfer-Encoding beside Content-Length by closing without an answer.
      if (svc.adapter === 'uws' && framing.includes('transfer-encoding')) t.same(statuses(text), [], `${what} on ${path}: closed by uWS`);
      else {
        t.same(statuses(text), [400], `${what} on ${path}: one 400 (${JSON.stringify(text.slice(0, 60))})`);
        if (svc.adapter === 'uws') t.match(text, /"detail":"Invalid Content-Length header: /, `${what} on ${path}: the detail says why`);
      }
    }
  }
  t.equal(upstream.seen.length, 0, 'no ambiguous request reaches a proxy upstream');
  t.equal((await svc.fetch('/health')).status, 200, 'the service still answers');
});

t.test('a request hidden behind ambiguous framing is never answered', async (t) => {
  const hidden = 'GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n';
  for (const [what, framing] of Object.entries(FRAMINGS)) {
    for (const path of PATHS) {
      const { text, closedByService } = await converse(svc.url, ambiguous(path, framing, hidden));
      t.ok(closedByService, `${what} on ${path}: the service closes the connection`);
      // uWS drops a connection whose next request arrives before the 400 could go out.
      const answers = statuses(text);
      t.ok(answers.length === 0 ? svc.adapter === 'uws' : answers.length === 1 && answers[0] === 400, `${what} on ${path}: at most one answer, a 400, never the hidden request's (${JSON.stringify(answers)})`);
    }
  }
  t.equal(upstream.seen.length, 0, 'no smuggled request reaches a proxy upstream');
});
