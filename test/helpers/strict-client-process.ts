import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { FAST, StrictConnection, type ReadPace } from './strict-http-client.js';

/**
 * The strict client (strict-http-client.ts) in a process of its own. A reader in the server's own
 * process only reads when the server's event loop lets it, so the kernel acknowledges the server's
 * bytes at once; a reader on another core keeps bytes in flight while the server writes, which is
 * how real clients load a socket (and what it took to see a framing defect at all).
 */

export interface StrictRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** What the child reports per answer: enough to check the body without shipping it back. */
export interface StrictReport {
  readonly status: number;
  readonly bytes: number;
  readonly sha256: string;
  /** Length of the JSON body's `answer` array, when it has one. */
  readonly answers?: number;
}

export interface StrictJob {
  readonly port: number;
  readonly requests: readonly StrictRequest[];
  /** 'fast', or 'jitter': pauses of 1-5 ms after some reads. */
  readonly pace: 'fast' | 'jitter';
  /** Repeat the requests until this many milliseconds have passed (0: once) ... */
  readonly forMs?: number;
  /** ... and at least this many times (default 1). */
  readonly times?: number;
}

function pace(kind: StrictJob['pace']): ReadPace {
  if (kind === 'fast') return FAST;
  let n = 0;
  return { pauseMs: () => (++n % 3 === 0 ? 1 + (n % 5) : 0) };
}

function answersOf(body: Buffer, json: boolean): number | undefined {
  if (!json) return undefined;
  const value = JSON.parse(body.toString('utf8')) as { answer?: unknown };
  return Array.isArray(value.answer) ? value.answer.length : undefined;
}

async function runJob(job: StrictJob): Promise<void> {
  const conn = await StrictConnection.open(job.port, pace(job.pace));
  const until = Date.now() + (job.forMs ?? 0);
  try {
    for (let round = 0; round < (job.times ?? 1) || Date.now() < until; round++) {
      for (const r of job.requests) {
        const answer = await conn.request(r.method, r.path, r.headers, r.body);
        const json = (answer.headers['content-type'] ?? '').startsWith('application/json');
        const answers = answersOf(answer.body, json);
        const report: StrictReport = { status: answer.status, bytes: answer.body.length, sha256: createHash('sha256').update(answer.body).digest('hex'), ...(answers === undefined ? {} : { answers }) };
        process.stdout.write(`${JSON.stringify(report)}\n`);
      }
    }
  } finally {
    conn.close();
  }
}

/**
 * Runs `job` in a child process; resolves with every report, or rejects with the child's error
 * (a framing error names the stream offset and the bytes around it). The child is killed if the
 * test ends first.
 */
export async function strictClientProcess(job: StrictJob, signal?: AbortSignal): Promise<StrictReport[]> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'], signal });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.on('error', () => {}); // an abort: the exit below reports it
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`strict client failed (exit ${code}): ${err.trim().split('\n').slice(0, 3).join(' | ')}`);
  return out
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as StrictReport);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runJob(JSON.parse(process.argv[2]!) as StrictJob).catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
