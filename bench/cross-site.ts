/**
 * What the Origin/Host guard adds to every request (protocol/cross-site-guard.ts): ns per call for
 * the header sets clients send, next to the bearer check every protected request already pays
 * (a SHA-256 of the header and a constant-time compare), measured in the same run.
 */
import { makeBearerCheck } from '../protocol/auth.js';
import { crossSiteGuard } from '../protocol/cross-site-guard.js';
import { isMain, printTable } from './lib/table.js';

const CALLS = Number(process.env['BENCH_CALLS'] ?? 1_000_000);

/** ns per call of `fn` over CALLS calls, after a warm-up; `sink` keeps the work from being dropped. */
function nsPerCall(fn: () => unknown): number {
  let sink = 0;
  for (let i = 0; i < 10_000; i++) if (fn()) sink++;
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) if (fn()) sink++;
  const ns = Number(process.hrtime.bigint() - start) / CALLS;
  return sink === -1 ? 0 : ns;
}

export async function run(): Promise<void> {
  const token = 'bench-token-0123456789abcdef';
  const bearer = makeBearerCheck(token);
  const loopback = crossSiteGuard(true, ['https://lab.example.org']);
  const anyHost = crossSiteGuard(false, []);
  const baseline = nsPerCall(() => bearer({ authorization: `Bearer ${token}`, host: '127.0.0.1:8420' }));
  const rows: Array<[string, number, number]> = [['bearer check (already on every protected request; baseline)', baseline, 1]];
  for (const [label, guard, headers] of [
    ['guard: loopback Host, no Origin (curl, CLI)', loopback, { host: '127.0.0.1:8420' }],
    ['guard: loopback Host and Origin (the console)', loopback, { host: '127.0.0.1:8420', origin: 'http://127.0.0.1:8420' }],
    ['guard: allowed_origins entry', loopback, { host: 'localhost:8420', origin: 'https://lab.example.org' }],
    ["guard: the service's own origin by name (0.0.0.0)", anyHost, { host: 'gpu-box:8420', origin: 'http://gpu-box:8420' }],
    ['guard: refused foreign Origin', loopback, { host: '127.0.0.1:8420', origin: 'http://evil.example.com' }],
  ] as const) {
    const ns = nsPerCall(() => guard(headers));
    rows.push([label, ns, ns / baseline]);
  }
  printTable(`Origin/Host guard cost per request (${CALLS} calls each)`, ['check', 'ns/call', 'x bearer'], rows);
}

if (isMain(import.meta.url)) await run();
