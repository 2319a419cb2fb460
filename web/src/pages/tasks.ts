import { errorText } from '../api/client.js';
import { every, type PageContext } from '../app/page.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { durationBetween, formatDuration, timeLabel } from '../ui/format.js';
import { instanceName, progressCell, stateBadge } from '../ui/task-bits.js';
import { type Column, virtualTable } from '../ui/virtual-table.js';
import type { TaskDefinition } from '../api/types.js';
import { columnKey } from '../../../schemas/task-column-keys.js';
import { MAX_COMPARED } from './compare.js';
import { chosenColumns, columnPicker, offeredNames } from './task-column-picker.js';
import { ColumnValues, compareCells, loadView, saveView } from './task-columns.js';
import { TaskFeed, type TaskRow } from './task-feed.js';

const STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/**
 * The row's checkbox for compare. Rows are links: a click on the box must toggle the selection,
 * not open the Task, so its default is prevented and the box is set from the selection after.
 */
function selectCell(selected: Set<string>, changed: () => void): Column<TaskRow> {
  return {
    label: '',
    width: '34px',
    render: (t) => {
      const box = h('input', { type: 'checkbox', class: 'row-select', 'aria-label': `Select ${t.task_id} to compare`, checked: selected.has(t.task_id) });
      box.addEventListener('click', (e) => {
        e.preventDefault();
        e.stopPropagation();
        if (selected.has(t.task_id)) selected.delete(t.task_id);
        else if (selected.size < MAX_COMPARED) selected.add(t.task_id);
        requestAnimationFrame(() => (box.checked = selected.has(t.task_id)));
        changed();
      });
      return box;
    },
  };
}

const COLUMNS: readonly Column<TaskRow>[] = [
  { label: 'state', width: '112px', render: (t) => stateBadge(t.state) },
  { label: 'type', width: 'minmax(70px, 0.6fr)', render: (t) => t.task_type },
  { label: 'task', width: 'minmax(90px, 0.8fr)', render: (t) => t.task_name },
  { label: 'name', width: 'minmax(140px, 1.4fr)', className: 'mono', render: (t) => instanceName(t.task_id) },
  { label: 'created', width: '190px', render: (t) => timeLabel(t.created_at) },
  { label: 'duration', width: '92px', className: 'num', render: (t) => formatDuration(durationBetween(t.started_at, t.finished_at)) },
  { label: 'progress', width: 'minmax(150px, 1fr)', render: progressCell },
];

interface Filters {
  state: string;
  type: string;
  text: string;
}

function matches(t: TaskRow, f: Filters): boolean {
  if (f.state && t.state !== f.state) return false;
  if (f.type && t.task_type !== f.type) return false;
  return !f.text || t.task_id.toLowerCase().includes(f.text);
}

/**
 * The Tasks page: every Task of the selected machine in a virtualised table that refreshes
 * itself from the changes since its last read, with filters by state (chips with counts), type
 * and name kept in the URL.
 */
export function renderTasks(container: HTMLElement, ctx: PageContext): void {
  const q = ctx.location.query;
  const filters: Filters = { state: q.get('state') ?? '', type: q.get('type') ?? '', text: (q.get('q') ?? '').toLowerCase() };
  const selected = new Set<string>();
  const compare = h('a', { class: 'button', hidden: true }, 'Compare');
  const selectionChanged = () => {
    compare.hidden = selected.size < 2;
    compare.textContent = `Compare ${selected.size}`;
    compare.setAttribute('href', href(['compare'], { ids: [...selected].join(',') }));
  };
  const view = loadView();
  const values = new ColumnValues(ctx.api, ctx.signal, () => redraw());
  const makeTable = () =>
    virtualTable([selectCell(selected, selectionChanged), ...COLUMNS, ...chosenColumns(view, values, viewChanged)], {
      rowHeight: 40,
      link: (t) => href(['tasks', t.task_id]),
      label: 'Tasks',
      empty: 'No Task matches.',
      drawn: (rows) => values.want(rows, view.columns),
    });
  let table = makeTable();
  // Added columns and the sort: saved, and the table rebuilt with its new header.
  function viewChanged(): void {
    saveView(view);
    const next = makeTable();
    table.element.replaceWith(next.element);
    table = next;
    redraw();
  }
  const pickerSlot = h('div', { class: 'column-picker-slot' });
  if (ctx.api.may('read_task_columns')) {
    const definitions = ctx.api.may('list_installed_task_definitions')
      ? ctx.api.answer<TaskDefinition[]>('list_installed_task_definitions', {}, { signal: ctx.signal }).catch(() => [])
      : Promise.resolve([]);
    void definitions.then((defs) => pickerSlot.replaceChildren(columnPicker(view, offeredNames(defs), viewChanged)));
  }
  const chips = h('div', { class: 'chips', role: 'group', 'aria-label': 'Filter by state' });
  const typeSelect = h('select', { 'aria-label': 'Filter by type' });
  const search = h('input', { type: 'search', placeholder: 'Filter by ID', 'aria-label': 'Filter by Task ID', value: q.get('q') ?? '' });
  const status = h('div', { class: 'muted', 'aria-live': 'polite' });
  const error = h('div', {});
  const feed = new TaskFeed(ctx.api);
  let all: readonly TaskRow[] = [];
  let lastMs = 0;
  let typeKey = '';
  let shownCount = 0;

  function keepInUrl(): void {
    // Filters live in the URL (shareable, survive reloads) without re-rendering the page.
    history.replaceState(null, '', href(['tasks'], { state: filters.state, type: filters.type, q: filters.text }));
  }

  function redraw(): void {
    const shown = all.filter((t) => matches(t, filters));
    const sort = view.sort;
    if (sort) {
      // A sort needs its column for every row shown, not only those in view.
      values.want(shown, view.columns.filter((c) => columnKey(c) === sort.key));
      shown.sort((a, b) => compareCells(values.value(a.task_id, sort.key), values.value(b.task_id, sort.key), sort.dir));
    }
    table.setRows(shown);
    const counts = new Map<string, number>();
    for (const t of all) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
    chips.replaceChildren(
      ...[['', 'all', all.length] as const, ...STATES.map((s) => [s, s, counts.get(s) ?? 0] as const)].map(([value, label, n]) => {
        const chip = h('button', { type: 'button', class: `chip${value ? ` chip-${value}` : ''}`, 'aria-pressed': String(filters.state === value) }, label, h('span', { class: 'count' }, String(n)));
        chip.addEventListener('click', () => {
          filters.state = value;
          keepInUrl();
          redraw();
        });
        return chip;
      }),
    );
    const types = [...new Set(all.map((t) => t.task_type))].sort();
    if (filters.type && !types.includes(filters.type)) types.unshift(filters.type);
    // Rebuilt only when the set of types changes, so an open drop-down is not closed by a refresh.
    if (types.join('\n') !== typeKey) {
      typeKey = types.join('\n');
      typeSelect.replaceChildren(h('option', { value: '' }, 'all types'), ...types.map((t) => h('option', { value: t, selected: t === filters.type }, t)));
    }
    shownCount = shown.length;
    status.textContent = statusLine();
  }

  function statusLine(): string {
    return `${shownCount} of ${all.length} Tasks · updated ${new Date().toLocaleTimeString()} in ${Math.round(lastMs)} ms`;
  }

  typeSelect.addEventListener('change', () => {
    filters.type = typeSelect.value;
    keepInUrl();
    redraw();
  });
  search.addEventListener('input', () => {
    filters.text = search.value.trim().toLowerCase();
    keepInUrl();
    redraw();
  });

  container.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', {}, 'Tasks'), status, h('div', { class: 'actions' }, compare, ctx.api.may('submit') ? h('a', { class: 'button primary', href: href(['tasks', 'new']) }, 'New task') : null)),
    h('div', { class: 'toolbar' }, chips, typeSelect, search, pickerSlot),
    error,
    table.element,
  );

  // Read whole once, then only the changes since (query_task_statuses); the pause grows with
  // the cost of a refresh and stops while the tab is hidden.
  every(() => Math.max(1000, lastMs * 5), ctx.signal, async () => {
    const started = performance.now();
    try {
      const changed = await feed.refresh(ctx.signal);
      lastMs = performance.now() - started;
      all = feed.rows;
      error.replaceChildren();
      if (changed) redraw();
      else status.textContent = statusLine();
    } catch (err) {
      if (!ctx.signal.aborted) error.replaceChildren(notice(errorText(err), 'error'));
    }
  });
}
