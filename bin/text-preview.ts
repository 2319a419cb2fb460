import { isObject } from '../core/is-object.js';
import { bytes, table } from './text-table.js';

const TEXT_KINDS = new Set(['text', 'markdown', 'json', 'yaml']);

/** The window of a CSV or Parquet preview: which rows these are, of how many. */
function windowLine(preview: Record<string, unknown>, shown: number): string {
  const offset = typeof preview['offset'] === 'number' ? preview['offset'] : 0;
  const total = typeof preview['row_count'] === 'number' ? ` of ${preview['row_count']}` : '';
  const range = shown === 0 ? 'no rows' : `rows ${offset + 1}-${offset + shown}${total}`;
  return `(${range}${preview['has_more'] ? `; more with --offset ${offset + shown}` : ''})`;
}

/**
 * `preview_file` for people: text kinds as their content, CSV and Parquet as a table of the
 * window's rows, an unsupported file as its size. Undefined when the answer is no preview.
 */
export function previewText(answer: Record<string, unknown>): string | undefined {
  const kind = answer['kind'];
  if (typeof kind !== 'string' || typeof answer['size'] !== 'number') return undefined;
  if (kind === 'unsupported') return `(no preview for this kind of file; ${bytes(answer['size'])})`;
  if (TEXT_KINDS.has(kind) && typeof answer['content'] === 'string') {
    const notes = [answer['truncated'] ? `truncated; the file has ${bytes(answer['size'])}` : '', typeof answer['parse_error'] === 'string' ? `not valid ${kind}: ${answer['parse_error']}` : ''].filter(Boolean);
    return `${answer['content'].replace(/\n$/, '')}${notes.length ? `\n(${notes.join('; ')})` : ''}`;
  }
  if ((kind === 'csv' || kind === 'parquet') && Array.isArray(answer['columns']) && Array.isArray(answer['rows'])) {
    const columns = answer['columns'].map(String);
    const rows = answer['rows'] as unknown[];
    const cellOf = (row: unknown, i: number, name: string): unknown => (Array.isArray(row) ? row[i] : isObject(row) ? row[name] : '');
    const body = table(rows, columns.map((name, i) => ({ heading: name, cell: (row: unknown) => cellOf(row, i, name) })));
    return `${body}\n${windowLine(answer, rows.length)}`;
  }
  return undefined;
}
