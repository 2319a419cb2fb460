import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { startChildServer, startServerCommand } from './lib/child-server.js';
import { compileC } from './lib/compile-c.js';
import { BENCH_TOKEN, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { printTable } from './lib/table.js';

const execFileAsync = promisify(execFile);
const MiB = 1024 * 1024;
const FILE_BYTES = 1024 * MiB;
const QUICK = process.env['BENCH_QUICK'] === '1';
const ROUNDS = QUICK ? 1 : 3;
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
/** One download by curl (a C client, so the client costs less than the server being measured). */
const curlGet = (url: string) => timed('curl', ['-sSf', '-H', `authorization: Bearer ${BENCH_TOKEN}`, url]);

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
const percent = (floor: number, ms: number) => `${((floor / ms) * 100).toFixed(0)} %`;

/** Median wall times of each case, measured in interleaved rounds so load drifts hit all alike. */
async function rounds(cases: Record<string, () => Promise<number>>): Promise<Record<string, number>> {
  const times: Record<string, number[]> = {};
  for (let i = 0; i < ROUNDS; i++) for (const [name, run] of Object.entries(cases)) (times[name] ??= []).push(await run());
  return Object.fromEntries(Object.entries(times).map(([name, v]) => [name, median(v)]));
}

/**
 * `GET /files` of a 1 GiB file next to `cat` of the same file to /dev/null, in one run (target:
 * the download at >= 80 % of the read), next to bare servers of the same front end serving the
 * same file (node:http piping a read stream; uWS with 4 MiB tryEnd writes) and a C server using
 * sendfile(2), the kernel's floor for any server; then the service's memory over 20 parallel
 * downloads. `BENCH_QUICK=1`: one round, no parallel downloads.
 */
export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-downloads-'));
  try {
    const built = await compileC('bench/servers/sendfile-server.c', dir);
    if (built instanceof Error) console.log(`no sendfile(2) row: ${built.message}`);
    const sendfileServer = built instanceof Error ? undefined : built;
    for (const adapter of ['uws', 'node'] as const) {
      const svc = await startServiceProcess({ adapter });
      const file = join(svc.workspace, 'big.bin');
      writeBigFile(file);
      const bare = await startChildServer(join(PACKAGE_ROOT, 'dist', 'bench', 'servers', 'bare-files.js'), [adapter, file]);
      const kernel = sendfileServer && adapter === 'uws' ? await startServerCommand(sendfileServer, [file]) : undefined;
      try {
        await readToNull(file); // warm the page cache for all
        const t = await rounds({
          read: () => readToNull(file),
          service: () => curlGet(`${svc.url}/files?path=big.bin`),
          bare: () => curlGet(`http://127.0.0.1:${bare.port}/`),
          ...(kernel ? { sendfile: () => curlGet(`http://127.0.0.1:${kernel.port}/`) } : {}),
        });
        const rows: Array<Array<string | number>> = [
          ['cat file > /dev/null (floor)', t['read']!, gibPerSecond(FILE_BYTES, t['read']!), '100 %', ''],
          [`GET /files, taskyard ${adapter}`, t['service']!, gibPerSecond(FILE_BYTES, t['service']!), percent(t['read']!, t['service']!), percent(t['bare']!, t['service']!)],
          [`bare ${adapter === 'uws' ? 'uWS, 4 MiB tryEnd' : 'node:http, read stream pipe'} (baseline)`, t['bare']!, gibPerSecond(FILE_BYTES, t['bare']!), percent(t['read']!, t['bare']!), '100 %'],
        ];
        if (t['sendfile'] !== undefined) rows.push(['bare C server, sendfile(2)', t['sendfile'], gibPerSecond(FILE_BYTES, t['sendfile']), percent(t['read']!, t['sendfile']), percent(t['bare']!, t['sendfile'])]);
        printTable(`1 GiB download by curl, front end ${adapter} (median of ${ROUNDS}, interleaved)`, ['case', 'ms', 'GiB/s', 'vs cat', 'vs bare'], rows);
        if (QUICK) continue;
        const idle = await rssMiB(svc.child.pid!);
        let parallel = { ms: 0, bytes: 0 };
        const peak = await peakRss(svc.child.pid!, download(svc, PARALLEL).then((r) => (parallel = r)));
        const after = await rssMiB(svc.child.pid!);
        printTable(`${PARALLEL} parallel 1 GiB downloads (${adapter}, node client, all bytes)`, ['ms', 'GiB/s', 'RSS before', 'peak', 'after'], [
          [parallel.ms, gibPerSecond(parallel.bytes, parallel.ms), `${idle.toFixed(0)} MiB`, `${peak.toFixed(0)} MiB`, `${after.toFixed(0)} MiB`],
        ]);
      } finally {
        await kernel?.stop();
        await bare.stop();
        await svc.stop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
