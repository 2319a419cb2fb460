/**
 * Metrics at research scale, end to end (issue 28):
 * - `read_task_metrics` over HTTP on a Task with 1,000,000 points (10 series × 100,000): every
 *   window from cursor 0 to the end, per call p50/p99 and bytes, next to `status` on the same
 *   connection (the floor: a Job answered from memory);
 * - the console's Task page in Debian's Chromium with those 10 charts: the time until every
 *   chart has drawn all its points, next to the same page of a Task without metrics; and the
 *   frame times while the page follows a running Task whose 10 series grow (100 points each per
 *   100 ms), next to the same page idle.
 * The points are written into the Task's metrics.jsonl by this process (the runner's own
 * appending is measured in bench/task-metrics.ts); the service reads them as it reads any Task's.
 */
import { existsSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { percentile, RawConnection } from './lib/load.js';
import { BENCH_TOKEN, jobCall, startServiceProcess, type ServiceProcess } from './lib/service-process.js';
import { isMain, printTable } from './lib/table.js';

const SERIES = 10;
const POINTS = Number(process.env['BENCH_CHART_POINTS'] ?? 100_000);
const CHROMIUM = process.env['TASKYARD_CHROMIUM'] ?? '/usr/bin/chromium';
const FOLLOW_MS = 6000;

/** `count` points of each series as metrics.jsonl lines, steps from `from`. */
function lines(from: number, count: number): string {
  const stamp = new Date().toISOString();
  const out: string[] = [];
  for (let step = from; step < from + count; step++) {
    for (let s = 0; s < SERIES; s++) out.push(`{"name":"series_${s}","value":${Math.sin(step / 500 + s) + Math.random() * 0.1},"step":${step},"timestamp":"${stamp}"}\n`);
  }
  return out.join('');
}

/** A Task of the `command` Task running `argv`; answers its ID and directory once it is in `state`. */
async function task(svc: ServiceProcess, conn: RawConnection, argv: string[], state: string): Promise<{ id: string; dir: string }> {
  const handle = await jobCall<{ task_id: string }>(conn, 'submit', { task: 'command', argv });
  if (!handle.success) throw new Error(`submit failed: ${JSON.stringify(handle.answer)}`);
  const id = handle.answer.task_id;
  for (let i = 0; i < 600; i++) {
    const status = await jobCall<{ state: string }>(conn, 'status', { task_id: id });
    if (status.answer.state === state) return { id, dir: join(svc.workspace, 'command', id) };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${id} never reached ${state}`);
}

async function readAll(conn: RawConnection, id: string): Promise<{ ms: number[]; bytes: number[]; points: number }> {
  const ms: number[] = [];
  const bytes: number[] = [];
  let cursor = 0;
  let points = 0;
  for (;;) {
    const start = performance.now();
    const res = await jobCall<{ series: Record<string, unknown[]>; cursor: number; has_more: boolean }>(conn, 'read_task_metrics', { task_id: id, cursor });
    ms.push(performance.now() - start);
    bytes.push(res.bytes);
    for (const p of Object.values(res.answer.series)) points += p.length;
    cursor = res.answer.cursor;
    if (!res.answer.has_more) return { ms, bytes, points };
  }
}

async function readBench(conn: RawConnection, id: string): Promise<void> {
  await readAll(conn, id); // warm-up: the first pass pays for compiling the reader and the file cache
  const reads = await readAll(conn, id);
  const floor: number[] = [];
  for (let i = 0; i < reads.ms.length; i++) {
    const start = performance.now();
    await jobCall(conn, 'status', { task_id: id });
    floor.push(performance.now() - start);
  }
  const sorted = (v: number[]) => Float64Array.from(v).sort();
  const total = reads.ms.reduce((a, b) => a + b, 0);
  printTable(
    `read_task_metrics over HTTP, ${SERIES} series × ${POINTS} points, cursor 0 to the end (default max_points)`,
    ['call', 'calls', 'p50 ms', 'p99 ms', 'KiB/call p50', 'total s', 'points/s'],
    [
      ['read_task_metrics', reads.ms.length, percentile(sorted(reads.ms), 50), percentile(sorted(reads.ms), 99), percentile(sorted(reads.bytes), 50) / 1024, total / 1000, reads.points / (total / 1000)],
      ['status (floor)', floor.length, percentile(sorted(floor), 50), percentile(sorted(floor), 99), '', floor.reduce((a, b) => a + b, 0) / 1000, ''],
    ],
  );
}

/** The page's globals these functions use (they run in the page: the bench is compiled without DOM types). */
interface PageGlobals {
  document: { querySelectorAll(selector: string): { length: number }; querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null };
  requestAnimationFrame(tick: (now: number) => void): void;
  sessionStorage: { setItem(key: string, value: string): void };
}

/** Milliseconds from navigation until `selector` matches `count` elements, measured by the page's own clock. */
async function pageReady(page: Page, url: string, selector: string, count: number): Promise<number> {
  await page.goto(url);
  await page.waitForFunction(({ selector, count }) => (globalThis as unknown as PageGlobals).document.querySelectorAll(selector).length === count, { selector, count }, { timeout: 300_000, polling: 50 });
  return page.evaluate(() => performance.now());
}

/** Frame intervals (ms) over `ms` of requestAnimationFrame in the page. */
function frameTimes(page: Page, ms: number): Promise<number[]> {
  return page.evaluate(
    (duration) =>
      new Promise<number[]>((resolve) => {
        const gaps: number[] = [];
        let last = performance.now();
        const end = last + duration;
        const tick = (now: number) => {
          gaps.push(now - last);
          last = now;
          if (now < end) (globalThis as unknown as PageGlobals).requestAnimationFrame(tick);
          else resolve(gaps);
        };
        (globalThis as unknown as PageGlobals).requestAnimationFrame(tick);
      }),
    ms,
  );
}

async function consoleBench(svc: ServiceProcess, full: string, empty: string, running: { id: string; dir: string }): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(`\nconsole charts: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium)`);
    return;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1360, height: 2400 } });
    await context.addInitScript((token) => (globalThis as unknown as PageGlobals).sessionStorage.setItem('taskyard.token', token), BENCH_TOKEN);
    const page = await context.newPage();
    const url = (id: string) => `${svc.url}/#/tasks/${encodeURIComponent(id)}`;
    const allDrawn = `figure.metric-chart[data-points="${POINTS}"] canvas`;
    const noMetrics = 'section[aria-label="Metrics"] .notice:not(:empty)';
    await pageReady(page, url(empty), noMetrics, 1); // warm-up: the bundle is cached from now on
    const base = await pageReady(page, url(empty), noMetrics, 1);
    const drawn = await pageReady(page, url(full), allDrawn, SERIES);
    const heap = await page.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0);

    const idle = await frameTimes(page, FOLLOW_MS);
    // The running Task's page, its series growing while the page follows it.
    await page.goto(url(running.id));
    // Once it has caught up with the points already there: from then on it only follows.
    await page.waitForFunction(({ selector, count }) => (globalThis as unknown as PageGlobals).document.querySelectorAll(selector).length === count, { selector: `figure.metric-chart[data-points="${POINTS}"] canvas`, count: SERIES }, { timeout: 300_000 });
    let step = POINTS;
    const grow = setInterval(() => {
      void appendFile(join(running.dir, 'metrics.jsonl'), lines(step, 100));
      step += 100;
    }, 100);
    let following: number[];
    try {
      following = await frameTimes(page, FOLLOW_MS);
    } finally {
      clearInterval(grow);
    }
    const grown = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.querySelector('figure.metric-chart')?.getAttribute('data-points'));
    const stat = (gaps: number[]) => {
      const sorted = Float64Array.from(gaps).sort();
      return [percentile(sorted, 50), percentile(sorted, 99), sorted[sorted.length - 1]!, gaps.filter((g) => g > 50).length];
    };
    printTable(
      `Console Task page in Chromium (headless, software rendering): ${SERIES} charts of ${POINTS} points`,
      ['case', 'ms to all drawn', 'x baseline', 'JS heap MB'],
      [
        ['Task without metrics (baseline)', base, '1.00', ''],
        [`${SERIES} × ${POINTS} points`, drawn, (drawn / base).toFixed(2), heap / 1024 / 1024],
      ],
    );
    printTable(
      `Frame times over ${FOLLOW_MS / 1000} s (requestAnimationFrame gaps; the following page read its Task every second, points per chart at the end: ${grown})`,
      ['case', 'p50 ms', 'p99 ms', 'max ms', 'frames > 50 ms'],
      [
        ['10 charts drawn, idle (baseline)', ...stat(idle)],
        ['following a running Task, 10 series growing 1,000 points/s each', ...stat(following)],
      ],
    );
  } finally {
    await browser.close();
  }
}

export async function run(): Promise<void> {
  const svc = await startServiceProcess({ adapter: 'uws' });
  const conn = await RawConnection.open(svc.port);
  try {
    const full = await task(svc, conn, ['true'], 'succeeded');
    await writeFile(join(full.dir, 'metrics.jsonl'), lines(0, POINTS));
    const empty = await task(svc, conn, ['true'], 'succeeded');
    const running = await task(svc, conn, ['sleep', '600'], 'running');
    await writeFile(join(running.dir, 'metrics.jsonl'), lines(0, POINTS));
    await readBench(conn, full.id);
    await consoleBench(svc, full.id, empty.id, running);
    // A fresh connection: the first one idled through the console part, past the keep-alive timeout.
    const last = await RawConnection.open(svc.port);
    await jobCall(last, 'cancel', { task_id: running.id });
    last.close();
  } finally {
    conn.close();
    await svc.stop();
  }
}

if (isMain(import.meta.url)) await run();
