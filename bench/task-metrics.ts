/**
 * What reading a Task's metric series costs (`read_task_metrics`): a metrics.jsonl of 200,000
 * points (~16 MB) read from cursor 0 to the end in bounded windows, against the same file read
 * whole and parsed at once (what an unbounded reader would do) and against the byte floor (the
 * bytes read in read_task_log windows without parsing). Memory is measured in a second pass:
 * the most heap plus buffers still live (after a full collection) while a window's answer (or
 * the whole parse) is held, above what was in use before; at two file sizes, to show what grows.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { METRICS_WINDOW_BYTES } from '../schemas/task-metrics.js';
import { readMetricsWindow } from '../supervisor/tasks/follow/metrics-reader.js';
import { readLogWindow } from '../supervisor/tasks/follow/log-reader.js';
import { collectGarbage } from '../supervisor/common/collect-garbage.js';
import { isMain, printTable } from './lib/table.js';

const SIZES = [50_000, 200_000];
const SERIES = 8;

const inUse = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Times `read` (no sampling), then runs it again sampling the live memory at each `sample()`. */
async function measured(read: (sample: () => void) => Promise<number>): Promise<{ ms: number; mb: number; count: number }> {
  collectGarbage();
  const start = performance.now();
  const count = await read(() => undefined);
  const ms = performance.now() - start;
  collectGarbage();
  const before = inUse();
  let peak = before;
  await read(() => {
    collectGarbage();
    peak = Math.max(peak, inUse());
  });
  return { ms, mb: (peak - before) / 1024 / 1024, count };
}

export async function run(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  await measureFile(20_000); // warm-up: the first pass pays for compiling the readers
  for (const points of SIZES) rows.push(...(await measureFile(points)));
  printTable(`read_task_metrics: a metrics.jsonl of ${SERIES} series read from cursor 0 to the end`, ['case', 'ms', 'points/s', 'live MB (peak)'], rows);
}

async function measureFile(count: number): Promise<Array<Array<string | number>>> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-metrics-'));
  try {
    const file = join(dir, 'metrics.jsonl');
    const stamp = new Date().toISOString();
    const lines: string[] = [];
    for (let i = 0; i < count; i++) lines.push(`{"name":"series_${i % SERIES}","value":${Math.random()},"step":${i},"timestamp":"${stamp}"}\n`);
    const text = lines.join('');
    lines.length = 0;
    await writeFile(file, text);
    const label = `${count} points (${(Buffer.byteLength(text) / 1024 / 1024).toFixed(1)} MB)`;

    const windows = (maxPoints: number) => async (sample: () => void) => {
      let cursor = 0;
      let points = 0;
      for (;;) {
        const chunk = await readMetricsWindow(file, cursor, maxPoints, METRICS_WINDOW_BYTES);
        for (const p of Object.values(chunk.series)) points += p.length;
        sample();
        cursor = chunk.cursor;
        if (!chunk.has_more) return points;
      }
    };
    const whole = async (sample: () => void) => {
      const parsed = (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
      sample();
      return parsed.length;
    };
    const bytes = async (sample: () => void) => {
      let offset = 0;
      let n = 0;
      for (;;) {
        const chunk = await readLogWindow(file, offset, 262_144);
        sample();
        n++;
        offset = chunk.next_offset;
        if (!chunk.has_more_after) return n;
      }
    };
    const a = await measured(windows(10_000));
    const b = await measured(windows(50_000));
    const c = await measured(whole);
    const d = await measured(bytes);
    const rate = (r: { ms: number; count: number }) => Math.round((r.count / r.ms) * 1000);
    return [
      [`${label}: windows, max_points 10,000 (default)`, a.ms.toFixed(0), rate(a), a.mb.toFixed(1)],
      [`${label}: windows, max_points 50,000 (1 MiB of file each)`, b.ms.toFixed(0), rate(b), b.mb.toFixed(1)],
      [`${label}: whole file read and parsed at once (unbounded)`, c.ms.toFixed(0), rate(c), c.mb.toFixed(1)],
      [`${label}: floor, its bytes in ${d.count} read_task_log windows of 256 KiB`, d.ms.toFixed(0), '', d.mb.toFixed(1)],
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
