/**
 * What opening Task files safely costs: the service now opens status/metadata records and log
 * windows with O_NOFOLLOW | O_NONBLOCK and checks the descriptor (one more fstat), and takes a
 * workspace lock at start. Each safe read is compared with the plain read it replaced, measured
 * in the same run, interleaved.
 */
import { readFile, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonObject } from '../supervisor/common/json-file.js';
import { readLogWindow } from '../supervisor/tasks/follow/log-reader.js';
import { lockWorkspace } from '../supervisor/common/workspace-lock.js';
import { isMain, printTable } from './lib/table.js';
import { writeDemoRecords } from './lib/task-records.js';

const RECORDS = 5000;
const LOG_READS = 5000;
const ROUNDS = 11;

/** The record reader before: readFile follows links and waits on a FIFO. */
async function plainJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

/** The log window read before: open, stat, read, decode, close (without the UTF-8 edge trims). */
async function plainWindow(file: string, limit: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const buf = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await handle.read(buf, 0, buf.length, Math.max(0, size - limit));
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export async function run(): Promise<void> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-files-'));
  try {
    const ids = writeDemoRecords(workspace, RECORDS);
    const files = ids.map((id) => join(workspace, 'base', id, 'status.json'));
    const log = join(workspace, 'base', ids[0]!, 'task.log');
    await writeFile(log, 'x'.repeat(1024 * 1024));

    const times = { plainScan: [] as number[], safeScan: [] as number[], plainLog: [] as number[], safeLog: [] as number[], lock: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      times.plainScan.push(await timed(() => Promise.all(files.map(plainJson))));
      times.safeScan.push(await timed(() => Promise.all(files.map(readJsonObject))));
      times.plainLog.push(await timed(async () => { for (let i = 0; i < LOG_READS; i++) await plainWindow(log, 65536); }));
      times.safeLog.push(await timed(async () => { for (let i = 0; i < LOG_READS; i++) await readLogWindow(log, -1, 65536); }));
      times.lock.push(await timed(async () => (await lockWorkspace(workspace)).release()));
    }
    const [plainScan, safeScan, plainLog, safeLog, lock] = [times.plainScan, times.safeScan, times.plainLog, times.safeLog, times.lock].map(median) as [number, number, number, number, number];
    printTable(`safe opening of Task files (median of ${ROUNDS} rounds, ms)`, ['case', 'ms', 'vs plain'], [
      [`read ${RECORDS} status.json, plain readFile`, plainScan, '1.00'],
      [`read ${RECORDS} status.json, O_NOFOLLOW|O_NONBLOCK + fstat`, safeScan, (safeScan / plainScan).toFixed(2)],
      [`${LOG_READS} tail windows of 64 KiB, plain open + stat`, plainLog, '1.00'],
      [`${LOG_READS} tail windows of 64 KiB, readLogWindow (safe)`, safeLog, (safeLog / plainLog).toFixed(2)],
      ['workspace lock: take and release', lock, ''],
    ]);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
