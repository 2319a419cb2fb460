/**
 * What the Tasks table's added columns and the CSV row count cost.
 *
 * 1. `count_csv_rows`' scanner on a CSV with quoted line breaks, against csv-parse counting the
 *    same records (what a parser-based count costs) and against reading the bytes alone (the floor).
 * 2. `read_task_columns` on a service with 500 finished Tasks, each with a metrics.jsonl of 1,000
 *    points: one input, one output and one final metric for a screenful (50 rows) and for every
 *    row (a sort), against the final values read with `read_task_metrics` from cursor 0 (what a
 *    console without the Job would do) and against `query_task_statuses` with config and result
 *    for the same rows (the index read alone, no metrics).
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { scanRecords } from '../workers/preview/csv-scan.js';
import type { TaskColumnValues } from '../schemas/task-columns.js';
import type { TaskMetricsChunk } from '../schemas/task-metrics.js';
import type { TaskStatusPage } from '../schemas/tasks.js';
import { RawConnection } from './lib/load.js';
import { jobCall, startServiceProcess } from './lib/service-process.js';
import { writeDemoRecords } from './lib/task-records.js';
import { isMain, printTable } from './lib/table.js';

const CSV_ROWS = 400_000;
const TASKS = 500;
const POINTS = 1000;
const SCREEN = 50;
const REPEAT = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

async function csvCounts(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-bench-csv-'));
  try {
    const file = join(dir, 'rows.csv');
    const lines = ['id,text,value'];
    for (let i = 0; i < CSV_ROWS; i++) lines.push(i % 10 === 0 ? `${i},"two\nlines, ""quoted""",${i / 3}` : `${i},plain text of a row,${i / 3}`);
    const text = `${lines.join('\n')}\n`;
    await writeFile(file, text);
    const mb = Buffer.byteLength(text) / 1024 / 1024;
    const scan = async () => {
      const handle = await open(file);
      try {
        return (await scanRecords(handle, {}, ',', new AbortController().signal)).records - 1;
      } finally {
        await handle.close();
      }
    };
    const parsed = async () => {
      let n = 0;
      for await (const _ of createReadStream(file).pipe(parse({ relax_column_count: true, relax_quotes: true, skip_empty_lines: true }))) n++;
      return n - 1;
    };
    const bytes = async () => {
      let n = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) n += (chunk as Buffer).length;
      return n;
    };
    await scan(); // warm-up
    const rows: Array<Array<string | number>> = [];
    for (const [label, fn] of [['count_csv_rows scanner', scan], ['csv-parse, every record', parsed], ['bytes read only (floor)', bytes]] as const) {
      const runs: number[] = [];
      let value = 0;
      for (let i = 0; i < 3; i++) {
        const run = await timed(fn);
        runs.push(run.ms);
        value = run.value;
      }
      const ms = median(runs);
      rows.push([label, ms, mb / (ms / 1000), label.startsWith('bytes') ? '-' : String(value)]);
    }
    printTable(`CSV row count: ${CSV_ROWS.toLocaleString('en')} rows (${mb.toFixed(1)} MB, a tenth with quoted line breaks)`, ['case', 'ms (median of 3)', 'MB/s', 'rows'], rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function columnReads(): Promise<void> {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-columns-'));
  const ids = writeDemoRecords(workspace, TASKS);
  const stamp = new Date().toISOString();
  for (const id of ids) {
    const lines: string[] = [];
    for (let i = 0; i < POINTS; i++) lines.push(`{"name":"series_${i % 4}","value":${Math.random()},"step":${i >> 2},"timestamp":"${stamp}"}\n`);
    await writeFile(join(workspace, 'base', id, 'metrics.jsonl'), lines.join(''));
  }
  const svc = await startServiceProcess({ workspace });
  try {
    const conn = await RawConnection.open(svc.port);
    const columns = [{ kind: 'input', name: 'x' }, { kind: 'output', name: 'result' }, { kind: 'metric', name: 'series_0' }];
    const screen = ids.slice(0, SCREEN);
    const rows: Array<Array<string | number>> = [];
    const measure = async (label: string, call: () => Promise<number>) => {
      await call(); // warm-up
      const runs: number[] = [];
      let bytes = 0;
      for (let i = 0; i < REPEAT; i++) {
        const { ms, value } = await timed(call);
        runs.push(ms);
        bytes = value;
      }
      rows.push([label, median(runs), `${(bytes / 1024).toFixed(1)} KB`]);
    };
    const columnsOf = (list: string[]) => async () => (await jobCall<TaskColumnValues>(conn, 'read_task_columns', { task_ids: list, columns })).bytes;
    await measure(`read_task_columns, ${SCREEN} rows (a screenful)`, columnsOf(screen));
    await measure(`read_task_columns, ${TASKS} rows (a sort)`, columnsOf(ids));
    await measure(`read_task_metrics from 0, ${SCREEN} Tasks (baseline)`, async () => {
      let bytes = 0;
      for (const id of screen) {
        for (let cursor = 0; ; ) {
          const page = await jobCall<TaskMetricsChunk>(conn, 'read_task_metrics', { task_id: id, cursor, max_points: 50_000 });
          bytes += page.bytes;
          cursor = page.answer.cursor;
          if (!page.answer.has_more) break;
        }
      }
      return bytes;
    });
    await measure(`query_task_statuses config+result, ${TASKS} rows (index floor)`, async () => (await jobCall<TaskStatusPage>(conn, 'query_task_statuses', { limit: 1000, fields: ['config', 'result'] })).bytes);
    printTable(`Tasks-table columns: ${TASKS} Tasks, ${POINTS} metric points each; input x, output result, final series_0`, ['case', `ms (median of ${REPEAT})`, 'answer'], rows);
  } finally {
    await svc.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await csvCounts();
  await columnReads();
}

if (isMain(import.meta.url)) await run();
