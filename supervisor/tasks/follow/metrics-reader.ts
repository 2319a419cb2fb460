import type { MetricPoint, TaskMetricsChunk } from '../../../schemas/task-metrics.js';
import { openTaskFile } from '../records/task-file.js';

const NEWLINE = 0x0a;

/** A line of metrics.jsonl as the runner writes it (runner/metric-points.ts), or undefined for anything else. */
export function parsePoint(text: string): { name: string; point: MetricPoint } | undefined {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof line !== 'object' || line === null || Array.isArray(line)) return undefined;
  const { name, value, step, timestamp } = line as Record<string, unknown>;
  if (typeof name !== 'string' || name === '' || typeof timestamp !== 'string') return undefined;
  if (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) return undefined;
  if (step !== undefined && !Number.isSafeInteger(step)) return undefined;
  return { name, point: step === undefined ? { value, timestamp } : { value, step: step as number, timestamp } };
}

/** Where a window starts: one byte before the cursor, to see whether the cursor is at a line's start. */
function planRead(cursor: number, size: number, windowBytes: number): { reset: boolean; start: number; from: number; want: number } {
  const reset = cursor > size;
  const start = reset ? 0 : cursor;
  const from = start > 0 ? start - 1 : 0;
  return { reset, start, from, want: Math.min(size - from, windowBytes + (start - from)) };
}

/**
 * Reads the points of `metrics.jsonl` after byte `cursor`: at most `windowBytes` of the file and
 * `maxPoints` points per call, so a call holds one window whatever the file's size. Lines are
 * whole JSON points; a torn last line (a point the runner is still writing) is left for the next
 * read, a line that is not a point is skipped, and a cursor inside a line moves to the next one
 * (a line longer than the window is skipped the same way). A cursor past the end (the Task ran
 * again, with a new file) reads from 0 with `reset`. A missing file is empty; one that is not a
 * regular file (a link, a FIFO) is refused with a PermissionError, as every Task file is.
 */
export async function readMetricsWindow(file: string, cursor: number, maxPoints: number, windowBytes: number): Promise<TaskMetricsChunk> {
  // Names come from the file: a null prototype keeps `__proto__` an ordinary series name.
  const series: Record<string, MetricPoint[]> = Object.create(null) as Record<string, MetricPoint[]>;
  const opened = await openTaskFile(file);
  if (!opened) return { series, cursor: 0, has_more: false, reset: cursor > 0 };
  const { handle, stat: { size } } = opened;
  try {
    const { reset, start, from, want } = planRead(cursor, size, windowBytes);
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = want > 0 ? await handle.read(buf, 0, want, from) : { bytesRead: 0 };
    const view = buf.subarray(0, bytesRead);
    const atEnd = from + bytesRead >= size;
    // The byte before the cursor is in the view: skip to the next line unless it ends one.
    let pos = from < start ? (view[0] === NEWLINE ? 1 : view.indexOf(NEWLINE) + 1) : 0;
    if (pos === 0 && from < start) {
      // No line starts in this window: a torn tail at the end waits, a longer line is skipped.
      return { series, cursor: atEnd ? start : from + bytesRead, has_more: !atEnd, reset };
    }
    const firstLine = pos;
    let points = 0;
    while (points < maxPoints) {
      const end = view.indexOf(NEWLINE, pos);
      if (end < 0) break;
      const parsed = parsePoint(view.toString('utf8', pos, end));
      pos = end + 1;
      if (!parsed) continue;
      (series[parsed.name] ??= []).push(parsed.point);
      points++;
    }
    // A window full of one line without its end: the line is longer than any point, skip it.
    if (pos === firstLine && !atEnd && view.indexOf(NEWLINE, pos) < 0) return { series, cursor: from + bytesRead, has_more: true, reset };
    const next = from + pos;
    return { series, cursor: next, has_more: !atEnd || view.indexOf(NEWLINE, pos) >= 0, reset };
  } finally {
    await handle.close();
  }
}
