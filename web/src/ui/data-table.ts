import { h } from './dom.js';

/** One window of table rows, as `preview_file` answers for CSV and Parquet. */
export interface TableWindow {
  columns: string[];
  rows: unknown[][] | Record<string, unknown>[];
  offset: number;
  has_more: boolean;
  /** Parquet knows its total from the file footer; CSV does not. */
  row_count?: number;
}

function cell(value: unknown): HTMLElement {
  if (value === null || value === undefined) return h('td', { class: 'null' }, 'null');
  if (typeof value === 'number' || typeof value === 'bigint') return h('td', { class: 'num' }, String(value));
  if (typeof value === 'object') return h('td', { class: 'mono' }, JSON.stringify(value));
  return h('td', {}, String(value));
}

/**
 * A page of rows with row numbers and a pager. The next page starts at offset + rows returned
 * (spec); the previous one `pageSize` rows earlier.
 */
export function dataTable(win: TableWindow, pageSize: number, go: (offset: number) => void): HTMLElement {
  const rows = win.rows.map((r) => (Array.isArray(r) ? r : win.columns.map((c) => (r as Record<string, unknown>)[c])));
  const first = win.offset + 1;
  const last = win.offset + rows.length;
  const prev = h('button', { type: 'button', class: 'small', 'aria-label': 'Previous rows' }, '← Previous');
  const next = h('button', { type: 'button', class: 'small', 'aria-label': 'Next rows' }, 'Next →');
  prev.disabled = win.offset === 0;
  next.disabled = !win.has_more;
  prev.addEventListener('click', () => go(Math.max(0, win.offset - pageSize)));
  next.addEventListener('click', () => go(win.offset + rows.length));
  const range = rows.length ? `rows ${first.toLocaleString()}–${last.toLocaleString()}` : 'no rows';
  const total = win.row_count !== undefined ? ` of ${win.row_count.toLocaleString()}` : win.has_more ? ' · more follow' : ` of ${last.toLocaleString()}`;
  return h(
    'div',
    { class: 'data-table' },
    h('div', { class: 'pager' }, h('span', { class: 'range', 'aria-live': 'polite' }, range, total), prev, next),
    h(
      'div',
      { class: 'table-scroll', tabindex: 0 },
      h(
        'table',
        { class: 'grid data' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'rownum' }, '#'), win.columns.map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, rows.map((r, i) => h('tr', {}, h('td', { class: 'rownum' }, String(win.offset + i + 1)), r.map(cell)))),
      ),
    ),
  );
}
