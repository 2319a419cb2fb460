/**
 * How long `taskyard serve` takes to exit after SIGTERM with 100 idle keep-alive clients and 100
 * open SSE streams connected, on each front end; next to the same service with no clients at all
 * (the floor: closing the pool, the watchers and the process itself).
 */
import { Agent, request } from 'node:http';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const IDLE = 100;
const STREAMS = 100;

function get(port: number, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', path: '/health', agent, headers: { authorization: `Bearer ${BENCH_TOKEN}` } }, (res) => {
      res.resume();
      res.on('end', resolve);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Opens a long SSE call (a shell `sleep`; most wait in the thread pool's queue); `ends` records
 * how it closed.
 */
function openStream(port: number, ends: string[]): void {
  const body = JSON.stringify({ arguments: { command: 'sleep 60', timeout: 120 } });
  const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/jobs/shell/events', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    let text = '';
    res.on('data', (d: Buffer) => (text += d.toString()));
    res.on('end', () => ends.push(/service is stopping/.test(text) ? 'stopping result' : 'other'));
    res.on('error', () => ends.push('broken'));
  });
  req.on('error', () => ends.push('broken'));
  req.end(body);
}

async function measure(adapter: 'uws' | 'node', withClients: boolean): Promise<{ ms: number; ends: string }> {
  const svc = await startServiceProcess({ adapter });
  const agent = new Agent({ keepAlive: true, maxSockets: IDLE });
  const ends: string[] = [];
  if (withClients) {
    await Promise.all(Array.from({ length: IDLE }, () => get(svc.port, agent)));
    for (let i = 0; i < STREAMS; i++) openStream(svc.port, ends);
    // The streams are in flight once their requests arrived; a bench may simply give them a moment.
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const exited = new Promise<void>((resolve) => svc.child.once('exit', () => resolve()));
  const start = performance.now();
  svc.child.kill('SIGTERM');
  await exited;
  const ms = performance.now() - start;
  await svc.stop();
  agent.destroy();
  await new Promise((r) => setTimeout(r, 200));
  const counts = ends.reduce<Record<string, number>>((acc, e) => ((acc[e] = (acc[e] ?? 0) + 1), acc), {});
  return { ms, ends: withClients ? JSON.stringify(counts) : '' };
}

export async function run(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  for (const adapter of ['uws', 'node'] as const) {
    const floor = await measure(adapter, false);
    const loaded = await measure(adapter, true);
    rows.push([`${adapter}: no clients (floor)`, floor.ms, '', '']);
    rows.push([`${adapter}: ${IDLE} idle keep-alive + ${STREAMS} SSE streams`, loaded.ms, (loaded.ms / floor.ms).toFixed(2), loaded.ends]);
  }
  printTable('SIGTERM to exit of `taskyard serve`', ['clients', 'exit ms', 'x floor', 'how the streams ended'], rows);
}

if (isMain(import.meta.url)) await run();
