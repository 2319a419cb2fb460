/**
 * Machine Jobs bench: what a `shell` call costs over a bare `/bin/sh -c` spawn (the floor), and
 * how long `machine_status` and `version` take, all measured in one run against the real service.
 * Run: `node dist/bench/machine.js` (after `npm run build`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { validateConfig } from '../supervisor/common/config.js';
import { startService } from '../app/service.js';

const TOKEN = 'bench-token';

interface Row {
  name: string;
  samples: number[];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Times `fn` `count` times after a short warm-up, `concurrency` at a time. */
async function measure(name: string, count: number, concurrency: number, fn: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < 5; i++) await fn();
  const samples: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next++ < count) {
      const start = performance.now();
      await fn();
      samples.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { name, samples };
}

async function bareSpawn(): Promise<void> {
  const child = spawn('/bin/sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  await once(child, 'close');
}

function printTable(rows: Row[], baseline: Row): void {
  const base = baseline.samples.reduce((a, b) => a + b, 0) / baseline.samples.length;
  console.log(`${'case'.padEnd(44)} ${'n'.padStart(5)} ${'mean ms'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'x floor'.padStart(8)}`);
  for (const row of rows) {
    const sorted = [...row.samples].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    const cells = [mean, percentile(sorted, 50), percentile(sorted, 99)].map((v) => v.toFixed(2).padStart(8));
    console.log(`${row.name.padEnd(44)} ${String(sorted.length).padStart(5)} ${cells[0]!.padStart(9)} ${cells[1]} ${cells[2]} ${(mean / base).toFixed(2).padStart(8)}`);
  }
}

/** Runs the bench and prints its table. */
export async function run(): Promise<void> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-'));
  const config = validateConfig({ service: { workspace, port: 0, host: '127.0.0.1' } }, 'bench');
  const service = await startService({ config, token: TOKEN });
  const call = async (job: string, args: Record<string, unknown> = {}) => {
    const response = await fetch(`${service.url}/jobs/${job}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args }),
    });
    const body = (await response.json()) as { success: boolean };
    if (!body.success) throw new Error(`${job} failed: ${JSON.stringify(body)}`);
  };
  try {
    const floor = await measure('bare spawn /bin/sh -c true (floor)', 100, 1, bareSpawn);
    const rows = [
      floor,
      await measure('shell "true" over HTTP JSON', 100, 1, () => call('shell', { command: 'true' })),
      await measure('bare spawn, 8 at a time', 200, 8, bareSpawn),
      await measure('shell "true" over HTTP JSON, 8 at a time', 200, 8, () => call('shell', { command: 'true' })),
      await measure('shell 1 MiB stdout over HTTP JSON', 30, 1, () => call('shell', { command: "head -c 1048576 /dev/zero | tr '\\0' a" })),
      await measure('machine_status over HTTP JSON', 100, 1, () => call('machine_status')),
      await measure('version over HTTP JSON', 200, 1, () => call('version')),
    ];
    console.log(`\nmachine Jobs (${service.adapter} front end; ratios against the bare spawn floor)`);
    printTable(rows, floor);
  } finally {
    await service.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
