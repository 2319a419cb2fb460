import { h } from './dom.js';

/** A column: its header, grid track size, and how a row's cell is drawn. */
export interface Column<T> {
  readonly label: string;
  readonly width: string;
  readonly className?: string;
  /** Drawn in the header instead of `label` (e.g. a sort button). */
  readonly header?: Node;
  /** The table is sorted by this column (`aria-sort`). */
  readonly sorted?: 'ascending' | 'descending';
  render(row: T): Node | string;
}

export interface VirtualTable<T> {
  readonly element: HTMLElement;
  /** Replaces the rows; only the ones in view are drawn, so thousands cost what a screenful does. */
  setRows(rows: readonly T[]): void;
}

const OVERSCAN = 8;

/**
 * A table that draws only the rows in view (plus a few above and below) over a spacer as tall
 * as all rows. Rows are links, so they work with keyboard, middle-click and screen readers.
 */
export function virtualTable<T>(
  columns: readonly Column<T>[],
  opts: { rowHeight: number; link(row: T): string; label: string; empty: string; drawn?(rows: readonly T[]): void },
): VirtualTable<T> {
  const template = columns.map((c) => c.width).join(' ');
  const header = h(
    'div',
    { class: 'vt-row vt-head', role: 'row' },
    columns.map((c) => h('div', { role: 'columnheader', class: c.className === 'num' ? 'num' : undefined, 'aria-sort': c.sorted }, c.header ?? c.label)),
  );
  header.style.gridTemplateColumns = template;
  const spacer = h('div', { class: 'vt-spacer', role: 'rowgroup' });
  const viewport = h('div', { class: 'vt-viewport', tabindex: 0 }, spacer);
  const empty = h('div', { class: 'notice notice-empty', hidden: true }, opts.empty);
  const element = h('div', { class: 'vtable', role: 'table', 'aria-label': opts.label }, header, viewport, empty);
  let rows: readonly T[] = [];
  let frame = 0;

  function draw(): void {
    frame = 0;
    const first = Math.max(0, Math.floor(viewport.scrollTop / opts.rowHeight) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / opts.rowHeight) + OVERSCAN);
    const drawn: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const row = rows[i]!;
      const el = h('a', { class: 'vt-row', role: 'row', href: opts.link(row), 'aria-rowindex': i + 2 }, columns.map((c) => h('div', { role: 'cell', class: c.className }, c.render(row))));
      el.style.gridTemplateColumns = template;
      el.style.transform = `translateY(${i * opts.rowHeight}px)`;
      el.style.height = `${opts.rowHeight}px`;
      drawn.push(el);
    }
    spacer.replaceChildren(...drawn);
    // Whoever fills cells lazily learns which rows are in view now.
    opts.drawn?.(rows.slice(first, last));
  }

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(draw);
  };
  viewport.addEventListener('scroll', schedule, { passive: true });
  new ResizeObserver(schedule).observe(viewport);

  return {
    element,
    setRows(next) {
      rows = next;
      element.setAttribute('aria-rowcount', String(rows.length + 1));
      spacer.style.height = `${rows.length * opts.rowHeight}px`;
      empty.hidden = rows.length > 0;
      viewport.hidden = rows.length === 0;
      schedule();
    },
  };
}
