import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chooseAdapter } from '../protocol/adapter.js';
import type { LentChunks } from '../protocol/chunk-pool.js';
import type { IncomingRequest, ListeningServer } from '../protocol/http.js';
import { validateConfig } from '../supervisor/common/config.js';
import { startService, type RunningService } from '../app/service.js';
import { writeBigText, writeCsv, writeParquetFile } from './lib/workspace-fixtures.js';

const execFileAsync = promisify(execFile);
const MiB = 1024 * 1024;
const TOKEN = 'bench-token';
const ROWS = 2_000_000;
const UPLOAD_BYTES = 256 * MiB;
const UPLOAD_ROUNDS = 5;

/**
 * Median wall time (ms) of each case over `runs` rounds. Cases run interleaved, one of each per
 * round, so a slow phase of this shared machine does not land on one case only.
 */
async function medians<K extends string>(runs: number, cases: Record<K, () => Promise<unknown>>): Promise<Record<K, number>> {
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < runs; i++) {
    for (const [name, fn] of Object.entries(cases) as Array<[K, () => Promise<unknown>]>) {
      const start = performance.now();
      await fn();
      times[name].push(performance.now() - start);
    }
  }
  const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v as number[])])) as Record<K, number>;
}

async function preview(svc: RunningService, args: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${svc.url}/jobs/preview_file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
  const body = (await res.json()) as { success: boolean; answer: unknown };
  if (!body.success) throw new Error(`preview failed: ${JSON.stringify(body.answer)}`);
}

/** One upload from a separate client process to `url`; resolves with its wall time (ms) and staged path. */
async function timedUpload(url: string): Promise<{ ms: number; path: string }> {
  const client = fileURLToPath(new URL('./lib/upload-client.js', import.meta.url));
  const { stdout } = await execFileAsync(process.execPath, [client, url, TOKEN, String(UPLOAD_BYTES)], { maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout) as { ms: number; path: string };
}

/** The transport's own ceiling: the same front end reading and dropping the body. */
function listenDrain(): Promise<ListeningServer> {
  return chooseAdapter().listen('127.0.0.1', 0, async (req: IncomingRequest & LentChunks, res) => {
    for await (const chunk of req.body()) req.recycle?.(chunk);
    res.send(200, { 'content-type': 'application/json' }, JSON.stringify({ answer: { path: '' } }));
  });
}

async function removeStaged(svc: RunningService, path: string): Promise<void> {
  await fetch(`${svc.url}/files?path=${encodeURIComponent(path)}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
}

/** The floor of an upload: node's sha256 over the bytes plus writing them to disk, in the same 1 MiB pieces. */
function uploadFloor(dir: string, data: Buffer): void {
  const fd = openSync(join(dir, 'floor.bin'), 'w');
  const hash = createHash('sha256');
  for (let at = 0; at < data.length; at += MiB) {
    const piece = data.subarray(at, at + MiB);
    hash.update(piece);
    writeSync(fd, piece);
  }
  closeSync(fd);
  hash.digest('hex');
}

function printTable(title: string, rows: Array<[string, string, string]>): void {
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log(`\n${title}`);
  for (const row of rows) console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   '));
}

/** Workspace bench: CSV and Parquet windows of 2M-row files, a 1 GB text preview, a 256 MiB upload. */
export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-ws-'));
  const workspace = join(dir, 'ws');
  const config = validateConfig({ service: { workspace, port: 0 } }, 'bench');
  const svc = await startService({ config, token: TOKEN });
  try {
    let start = performance.now();
    await writeCsv(join(svc.workspace, 'rows.csv'), ROWS);
    await writeParquetFile(join(svc.workspace, 'rows.parquet'), ROWS, 100_000);
    await writeBigText(join(svc.workspace, 'big.txt'), 1024 * MiB);
    console.log(`fixtures generated in ${((performance.now() - start) / 1000).toFixed(1)} s`);

    const cases = {
      csv0: () => preview(svc, { path: 'rows.csv', offset: 0 }),
      csv1m: () => preview(svc, { path: 'rows.csv', offset: 1_000_000 }),
      pq0: () => preview(svc, { path: 'rows.parquet', offset: 0 }),
      pqMid: () => preview(svc, { path: 'rows.parquet', offset: 1_000_000 }),
      pqEnd: () => preview(svc, { path: 'rows.parquet', offset: ROWS - 200 }),
      text: () => preview(svc, { path: 'big.txt' }),
    };
    await medians(1, cases); // warm-up: pool threads, parquet-wasm compile, JIT
    const { csv0, csv1m, pq0, pqMid, pqEnd, text } = await medians(5, cases);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const ratio = (v: number, base: number) => `${(v / base).toFixed(2)}×`;
    printTable('preview_file (median wall time over HTTP; 200-row windows)', [
      ['case', 'time', 'vs baseline'],
      ['csv 2M rows, offset 0 (baseline)', ms(csv0), '1.00×'],
      ['csv 2M rows, offset 1,000,000', ms(csv1m), ratio(csv1m, csv0)],
      ['parquet 2M rows / 20 groups, offset 0 (baseline)', ms(pq0), '1.00×'],
      ['parquet, offset 1,000,000 (middle)', ms(pqMid), ratio(pqMid, pq0)],
      ['parquet, last 200 rows', ms(pqEnd), ratio(pqEnd, pq0)],
      ['text 1 GiB file (512 KiB read)', ms(text), ratio(text, csv0)],
    ]);

    const data = Buffer.alloc(UPLOAD_BYTES);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i);
    // Floor, bare receive and upload alternate, like the preview cases; HTTP times are taken by the client.
    const drain = await listenDrain();
    const floors: number[] = [];
    const drains: number[] = [];
    const uploads: number[] = [];
    try {
      for (let i = 0; i < UPLOAD_ROUNDS; i++) {
        const start = performance.now();
        uploadFloor(dir, data);
        floors.push(performance.now() - start);
        drains.push((await timedUpload(`http://127.0.0.1:${drain.port}`)).ms);
        const { ms, path } = await timedUpload(svc.url);
        uploads.push(ms);
        await removeStaged(svc, path);
      }
    } finally {
      await drain.close();
    }
    const [floor, bare, up] = [floors, drains, uploads].map((v) => v.sort((a, b) => a - b)[Math.floor(UPLOAD_ROUNDS / 2)]!) as [number, number, number];
    const mbps = (t: number) => `${(UPLOAD_BYTES / MiB / (t / 1000)).toFixed(0)} MiB/s`;
    printTable('upload of 256 MiB (median of 5; the client is a separate process)', [
      ['case', 'throughput', 'vs floor'],
      ['floor: sha256 + disk write, 1 MiB pieces', mbps(floor), '100%'],
      [`bare ${svc.adapter} receive, body dropped (transport ceiling)`, mbps(bare), `${((floor / bare) * 100).toFixed(0)}%`],
      ['POST /files (HTTP, hash, write, stage)', mbps(up), `${((floor / up) * 100).toFixed(0)}%`],
    ]);
  } finally {
    await svc.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
