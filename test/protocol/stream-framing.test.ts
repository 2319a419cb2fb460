// Runs on every HTTP front end.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { chooseAdapter } from '../../protocol/adapter.js';
import type { Handler, ListeningServer } from '../../protocol/http.js';
import { expected, handler, random, served } from './framing-plan.js';
import { strictClientProcess } from '../helpers/strict-client-process.js';
import { StrictConnection, type ReadPace } from '../helpers/strict-http-client.js';

/**
 * Chunked framing under backpressure, checked byte by byte. A handler streams a plan of chunks of
 * awkward sizes (0 and 1 byte, uWS's 16 KiB cork buffer ± 1, 48 KiB listing chunks, 1 MiB),
 * as strings and as bytes, through `write` and `writeShared`, with and without a lead, to readers
 * that read fast or slowly with jitter, several answers per keep-alive connection. A strict client
 * (test/helpers/strict-http-client.ts) checks every byte of framing and body.
 *
 * What it guards: this uWS build loses a chunk's data when a write inside a cork overflows the
 * cork buffer while the socket is full and uWS's own buffer is empty (AsyncSocket::uncork returns
 * after buffering the corked chunk header, never writing the data; fixed upstream in uWebSockets
 * v20.77). The client then read the next chunk's bytes as this one's and found a non-hex "chunk
 * size" (`HPE_INVALID_CHUNK_SIZE` in node's http client, seen once in a 300,000-record listing).
 * The loss needs a socket loaded by a reader on another core, and is rare (see the second test);
 * FRAMING_STRESS_MS=<ms> runs both tests that long.
 */

const STRESS_MS = Number(process.env['FRAMING_STRESS_MS'] ?? 0);
const KINDS = ['plain', 'lead', 'turns', 'send'];

function pathOf(seed: number, total: number): string {
  return `/${seed}/${total}/${KINDS[seed % KINDS.length]!}`;
}

/** The front end under test (TASKYARD_HTTP_ADAPTER) on a free loopback port, closed at the end. */
async function listen(t: Test, handle: Handler): Promise<ListeningServer> {
  const server = await chooseAdapter().listen('127.0.0.1', 0, handle);
  t.teardown(() => server.close());
  return server;
}

/** The plans served from a process of their own (framing-plan.ts), stopped and awaited at the end. */
async function serverProcess(t: Test): Promise<{ port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./framing-plan.js', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { port: Number(line.toString().trim()) };
}

/** Jittery slow reading: most reads go on at once, some wait up to a few milliseconds. */
function jitter(seed: number): ReadPace {
  const next = random(seed);
  return { pauseMs: () => (next() < 0.6 ? 0 : Math.floor(next() * 4) + 1) };
}

/** Asks for `answers` plans one after another on one connection read in this process, checking each byte. */
async function slowReader(server: ListeningServer, seed: number, answers: number, total: number): Promise<number> {
  const conn = await StrictConnection.open(server.port, jitter(seed));
  try {
    let bytes = 0;
    for (let i = 0; i < answers; i++) {
      const path = pathOf(seed + i, total);
      const answer = await conn.request('GET', path).catch((err: Error) => {
        throw new Error(`${path}: ${err.message}; the server ${JSON.stringify(served.get(path))}`);
      });
      if (answer.status !== 200) throw new Error(`${path}: status ${answer.status}`);
      const want = expected(path);
      const got = answer.body.toString('latin1');
      if (got !== want) {
        let at = 0;
        while (at < want.length && got[at] === want[at]) at++;
        throw new Error(`${path}: body differs at byte ${at} of ${want.length} (got ${got.length} bytes)`);
      }
      bytes += got.length;
    }
    return bytes;
  } finally {
    conn.close();
  }
}

/** The same from a reader in a process of its own, reading as fast as it can (bodies checked by digest). */
async function fastReader(server: ListeningServer, seed: number, answers: number, total: number): Promise<number> {
  const paths = Array.from({ length: answers }, (_, i) => pathOf(seed + i, total));
  const reports = await strictClientProcess({ port: server.port, pace: 'fast', requests: paths.map((path) => ({ method: 'GET', path })) });
  let bytes = 0;
  reports.forEach((report, i) => {
    const want = createHash('sha256').update(expected(paths[i]!), 'latin1').digest('hex');
    if (report.status !== 200 || report.sha256 !== want) throw new Error(`${paths[i]!}: status ${report.status}, ${report.bytes} bytes, not the bytes sent`);
    bytes += report.bytes;
  });
  return bytes;
}

t.test('streamed chunks of every awkward size arrive framed exactly, to fast and slow readers', async (t) => {
  if (STRESS_MS > 0) t.setTimeout(STRESS_MS + 60_000);
  const server = await listen(t, handler);
  const deadline = Date.now() + STRESS_MS;
  let round = 0;
  let bytes = 0;
  do {
    const seed = 1000 * ++round;
    const counts = await Promise.all([
      slowReader(server, seed, 2, 4 << 20),
      slowReader(server, seed + 102, 2, 4 << 20),
      fastReader(server, seed + 200, 4, 4 << 20),
      fastReader(server, seed + 300, 4, 4 << 20),
    ]);
    bytes += counts.reduce((a, b) => a + b, 0);
  } while (Date.now() < deadline);
  t.pass(`${round} rounds, ${(bytes / 2 ** 20).toFixed(0)} MiB checked`);
});

t.test('48 KB chunks written back to back reach a fast reader in another process intact', async (t) => {
  // Listing chunks, written as fast as the socket takes them, from a server process to a reader
  // process: the shape that showed the defect. Before the fix, a bare loop of this shape lost one
  // chunk's data in about 0.3-1.3 GB (2 loaded cores, ~50 MB/s), so the default run here (~64 MB)
  // rarely sees it; FRAMING_STRESS_MS keeps it going for gigabytes.
  if (STRESS_MS > 0) t.setTimeout(STRESS_MS + 60_000);
  const server = await serverProcess(t);
  const path = `/7/${32 << 20}/burst`;
  const want = createHash('sha256').update(expected(path), 'latin1').digest('hex');
  const reports = await strictClientProcess({ port: server.port, pace: 'fast', requests: [{ method: 'GET', path }], times: 2, forMs: STRESS_MS });
  const wrong = reports.filter((r) => r.status !== 200 || r.sha256 !== want).length;
  t.equal(wrong, 0, `${reports.length} answers of ${path}, every byte as sent`);
});
