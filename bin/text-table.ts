import { isObject } from '../core/is-object.js';

/** One column of a text table: its heading and how a row shows in it. */
export interface Column<R> {
  heading: string;
  cell: (row: R) => unknown;
  /** Right-aligned (numbers, sizes). */
  right?: boolean;
}

/** The widest a cell gets; longer values end in `…` (a table is for scanning, the JSON has it all). */
const MAX_CELL = 60;

/** A percentage for people: one decimal at most (`33.3%`, `50%`); empty when unknown. */
export function percent(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '';
  return `${Number(value.toFixed(1))}%`;
}

/** A byte count for people: `512 B`, `1.5 KiB`, `3.2 GiB`. */
export function bytes(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = value;
  let unit = 0;
  while (Math.abs(n) >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${Number(n.toFixed(1))} ${units[unit]}`;
}

/** A value on one line: text as it is, numbers and booleans as written, the rest as compact JSON. */
export function cellText(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

/** Rows under headings, columns padded to their widest cell; `(none)` for no rows. */
export function table<R>(rows: readonly R[], columns: ReadonlyArray<Column<R>>): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => cellText(c.cell(row))));
  const widths = columns.map((c, i) => Math.max(c.heading.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) => values.map((v, i) => (columns[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((c) => c.heading)), ...cells.map(line)].join('\n');
}

/**
 * Columns for objects of any shape: every key that some row has, in first-seen order (for
 * listings the CLI has no dedicated table for, such as list_machines or delete_entries).
 */
export function columnsOf(rows: readonly unknown[]): Array<Column<unknown>> {
  const keys = new Set<string>();
  for (const row of rows) if (isObject(row)) for (const key of Object.keys(row)) keys.add(key);
  return [...keys].map((key) => ({ heading: key.toUpperCase(), cell: (row) => (isObject(row) ? shown(key, row[key]) : ''), right: rows.some((r) => isObject(r) && typeof r[key] === 'number') }));
}

/** A field's value, percentages rounded (`usage_percent`, `percentage`). */
function shown(key: string, value: unknown): unknown {
  return /percent/.test(key) ? percent(value) : value;
}

/** The answer with every percentage field rounded, for the YAML view of objects without a table. */
export function roundPercentages(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(roundPercentages);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, /percent/.test(k) && typeof v === 'number' ? Number(v.toFixed(1)) : roundPercentages(v)]));
}
