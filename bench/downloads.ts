import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { printTable } from './lib/table.js';

const execFileAsync = promisify(execFile);
const MiB = 1024 * 1024;
const FILE_BYTES = 1024 * MiB;
const ROUNDS = 3;
const PARALLEL = 20;

/** A 1 GiB file of varied bytes (1 MiB of random-ish data repeated). */
function writeBigFile(path: string): void {
  const piece = Buffer.alloc(MiB);
  for (let i = 0; i + 4 <= piece.length; i += 4) piece.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = openSync(path, 'w');
  for (let at = 0; at < FILE_BYTES; at += MiB) writeSync(fd, piece);
  closeSync(fd);
}

/** Wall time (ms) of a child process that writes to /dev/null. */
function timed(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const sink = openSync('/dev/null', 'w');
    const start = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', sink, 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => {
      closeSync(sink);
      if (code === 0) resolve(performance.now() - start);
      else reject(new Error(`${cmd} exited with ${code}`));
    });
  });
}

/** The floor: `cat` of the same file to /dev/null (page cache warm, like the service's reads). */
const readToNull = (path: string) => timed('cat', [path]);
/** One download by curl (a C client, so the client costs less than the service being measured). */
const curlDownload = (svc: ServiceProcess) => timed('curl', ['-sSf', '-H', `authorization: Bearer ${BENCH_TOKEN}`, `${svc.url}/files?path=big.bin`]);

async function download(svc: ServiceProcess, parallel: number): Promise<{ ms: number; bytes: number }> {
  const client = fileURLToPath(new URL('./lib/download-client.js', import.meta.url));
  const { stdout } = await execFileAsync(process.execPath, [client, String(svc.port), BENCH_TOKEN, 'big.bin', String(parallel)], { maxBuffer: MiB });
  return JSON.parse(stdout) as { ms: number; bytes: number };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** Peak RSS of the service while `work` runs, sampled every 50 ms. */
async function peakRss(pid: number, work: Promise<unknown>): Promise<number> {
  let peak = await rssMiB(pid);
  let done = false;
  void work.finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, await rssMiB(pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  return peak;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const gibPerSecond = (bytes: number, ms: number) => bytes / 1024 ** 3 / (ms / 1000);

/**
 * `GET /files` of a 1 GiB file next to `cat` of the same file to /dev/null, in one run (target:
 * the download at ≥ 80 % of the read), and the service's memory over 20 parallel downloads.
 */
export async function run(): Promise<void> {
  for (const adapter of ['uws', 'node'] as const) {
    const svc = await startServiceProcess({ adapter });
    try {
      const file = join(svc.workspace, 'big.bin');
      writeBigFile(file);
      await readToNull(file); // warm the page cache for both
      const reads: number[] = [];
      const downloads: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        reads.push(await readToNull(file));
        downloads.push(await curlDownload(svc));
      }
      const read = median(reads);
      const one = median(downloads);
      const idle = await rssMiB(svc.child.pid!);
      let parallel = { ms: 0, bytes: 0 };
      const peak = await peakRss(svc.child.pid!, download(svc, PARALLEL).then((r) => (parallel = r)));
      const after = await rssMiB(svc.child.pid!);
      printTable(`GET /files, 1 GiB file, front end ${adapter} (median of ${ROUNDS}; clients in their own processes)`, ['case', 'ms', 'GiB/s', 'vs read'], [
        ['cat file > /dev/null (floor)', read, gibPerSecond(FILE_BYTES, read), '100 %'],
        ['GET /files, one download (curl)', one, gibPerSecond(FILE_BYTES, one), `${((read / one) * 100).toFixed(0)} %`],
        [`GET /files, ${PARALLEL} at once (node client, all bytes)`, parallel.ms, gibPerSecond(parallel.bytes, parallel.ms), ''],
      ]);
      printTable(`service memory during ${PARALLEL} parallel 1 GiB downloads (${adapter})`, ['RSS before', 'peak', 'after'], [[`${idle.toFixed(0)} MiB`, `${peak.toFixed(0)} MiB`, `${after.toFixed(0)} MiB`]]);
    } finally {
      await svc.stop();
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
