/**
 * Times `GET /health` in a process of its own: one request at a time with 5 ms between, until its
 * stdin ends; then prints the latencies (ms) as one JSON array. A bench that also drains many
 * sockets (bench/memory.ts's followers read gigabytes) would otherwise time its own event loop
 * beside the service's: a prober in that process measured each answer late by however long the
 * byte-counting took in that turn.
 *
 * `node dist/bench/lib/health-probe.js <port> <token>`
 */
import { RawConnection, rawRequest } from './load.js';

const [port, token] = process.argv.slice(2);
const conn = await RawConnection.open(Number(port));
const health = rawRequest('GET', '/health', { authorization: `Bearer ${token}` });
const latencies: number[] = [];
let over = false;
process.stdin.on('end', () => (over = true)).resume();
process.stdout.write('PROBING\n');
while (!over) {
  const start = performance.now();
  await conn.request(health);
  latencies.push(performance.now() - start);
  await new Promise((r) => setTimeout(r, 5));
}
conn.close();
process.stdout.write(`${JSON.stringify(latencies)}\n`);
