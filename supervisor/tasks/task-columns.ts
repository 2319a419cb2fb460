import { join } from 'node:path';
import { TASK_REPORT_FILES } from '../../core/task-record/record-files.js';
import { columnKey, TASK_COLUMNS_LIMITS, type ReadTaskColumnsInput, type TaskColumnValue, type TaskColumnValues } from '../../schemas/task-columns.js';
import { parsePoint } from './follow/metrics-reader.js';
import { openTaskFile } from './records/task-file.js';
import type { TaskIndex } from './records/task-index.js';

const NEWLINE = 0x0a;
/** Bytes read by the first step of the backward search (~100 points: most Tasks' last point of every metric lies there); each next step doubles it. */
const FIRST_WINDOW = 8 * 1024;
/** Tasks whose metrics are read at once: file reads wait on the thread pool, so they overlap. */
const PARALLEL_READS = 16;

/** A text of at most `TASK_COLUMNS_LIMITS.text` UTF-16 units, never ending in half a surrogate pair. */
function cut(text: string): string {
  const max = TASK_COLUMNS_LIMITS.text;
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)}…`;
}

/** A field's value as a cell: scalars as they are, anything else as its JSON text; undefined when absent. */
function cellOf(value: unknown): TaskColumnValue | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  return cut(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * The last value of each of `names` in a Task's metrics.jsonl, searched backwards from the end
 * window by window until every name is found or `metricTailBytes` were read: a metric last
 * reported before that tail has no final value here. A torn last line (a point being written)
 * is not a point and is passed over.
 */
async function lastMetricValues(file: string, names: ReadonlySet<string>): Promise<Map<string, number | null>> {
  const found = new Map<string, number | null>();
  const opened = await openTaskFile(file);
  if (!opened) return found;
  const { handle, stat } = opened;
  try {
    const floor = Math.max(0, stat.size - TASK_COLUMNS_LIMITS.metricTailBytes);
    // The start of a line the last window cut off: it ends the next (earlier) window's bytes.
    let carry = Buffer.alloc(0);
    for (let end = stat.size, window = FIRST_WINDOW; end > floor && found.size < names.size; window *= 2) {
      const start = Math.max(floor, end - window);
      const buf = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await handle.read(buf, 0, buf.length, start);
      const view = Buffer.concat([buf.subarray(0, bytesRead), carry]);
      // Bytes before the first line feed may belong to a line that began before this window.
      const firstBreak = view.indexOf(NEWLINE);
      const first = start === 0 ? 0 : firstBreak < 0 ? view.length : firstBreak + 1;
      for (let stop = view.length; stop > first && found.size < names.size; ) {
        const nl = view.lastIndexOf(NEWLINE, stop - 1);
        const begin = Math.max(nl + 1, first);
        const point = begin < stop ? parsePoint(view.toString('utf8', begin, stop)) : undefined;
        if (point && names.has(point.name) && !found.has(point.name)) found.set(point.name, point.point.value);
        stop = nl;
      }
      carry = view.subarray(0, first);
      end = start;
    }
    return found;
  } finally {
    await handle.close();
  }
}

/**
 * `read_task_columns`: the chosen input, output and final-metric values of each Task, for the
 * console's Tasks table. Inputs and outputs come from the index (no file read); final metrics
 * from the end of each Task's metrics.jsonl. A metrics file that cannot be read looks empty, as
 * every bad record does to a reader.
 */
export async function readTaskColumns(index: TaskIndex, { task_ids: ids, columns }: ReadTaskColumnsInput): Promise<TaskColumnValues> {
  const values: Record<string, Record<string, TaskColumnValue>> = {};
  const unknown: string[] = [];
  const metrics = new Set(columns.filter((c) => c.kind === 'metric').map((c) => c.name));
  const metricReads: Array<{ dir: string; row: Record<string, TaskColumnValue> }> = [];
  for (const id of ids) {
    const record = index.get(id);
    const status = record?.status;
    if (!record || !status) {
      unknown.push(id);
      continue;
    }
    // Field names come from clients: a null prototype keeps `__proto__` an ordinary key.
    const row = Object.create(null) as Record<string, TaskColumnValue>;
    for (const c of columns) {
      const source = c.kind === 'input' ? status.config : c.kind === 'output' ? status.result : undefined;
      const value = source && Object.hasOwn(source, c.name) ? cellOf(source[c.name]) : undefined;
      if (value !== undefined) row[columnKey(c)] = value;
    }
    values[id] = row;
    if (metrics.size > 0) metricReads.push({ dir: record.dir, row });
  }
  let next = 0;
  const reader = async () => {
    for (let read = metricReads[next++]; read; read = metricReads[next++]) {
      const last = await lastMetricValues(join(read.dir, TASK_REPORT_FILES.metrics), metrics).catch(() => new Map<string, number | null>());
      for (const [name, value] of last) read.row[columnKey({ kind: 'metric', name })] = value;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, metricReads.length) }, reader));
  return { values, unknown };
}
