import type { TaskDefinition } from '../api/types.js';
import { columnKey, TASK_COLUMN_KINDS, TASK_COLUMNS_LIMITS, type TaskColumnKind } from '../../../schemas/task-column-keys.js';
import { h } from '../ui/dom.js';
import type { Column } from '../ui/virtual-table.js';
import type { ColumnValues, TableView } from './task-columns.js';
import type { TaskRow } from './task-feed.js';
import { formatMetric } from './task-metrics.js';

/** Field names the picker offers by kind: the inputs and outputs the installed definitions declare (metrics have no list). */
export type OfferedNames = Record<TaskColumnKind, string[]>;

/** The property names of the definitions' input and output schemas, sorted. */
export function offeredNames(definitions: readonly TaskDefinition[]): OfferedNames {
  const names = (schemas: ReadonlyArray<{ properties?: Record<string, unknown> }>) => [...new Set(schemas.flatMap((s) => Object.keys(s.properties ?? {})))].sort();
  return { input: names(definitions.map((d) => d.input_schema)), output: names(definitions.map((d) => d.output_schema)), metric: [] };
}

/**
 * The "Columns" menu of the Tasks table: add a column for an input field, an output field or the
 * final value of a metric (the name typed, inputs and outputs suggested), and remove one.
 */
export function columnPicker(view: TableView, offered: OfferedNames, changed: () => void): HTMLElement {
  const kind = h('select', { 'aria-label': 'Column kind' }, TASK_COLUMN_KINDS.map((k) => h('option', { value: k }, k === 'metric' ? 'final metric' : `${k} field`)));
  const suggestions = h('datalist', { id: 'task-column-names' });
  const name = h('input', { type: 'text', list: 'task-column-names', placeholder: 'name', 'aria-label': 'Column name', required: true, maxlength: 200 });
  const add = h('button', { type: 'submit', class: 'small primary' }, 'Add column');
  const list = h('ul', { class: 'column-list', 'aria-label': 'Added columns' });
  const suggest = () => suggestions.replaceChildren(...offered[kind.value as TaskColumnKind].map((n) => h('option', { value: n })));
  kind.addEventListener('change', suggest);
  suggest();

  const drawList = () => {
    add.disabled = view.columns.length >= TASK_COLUMNS_LIMITS.columns;
    list.replaceChildren(
      ...view.columns.map((c) => {
        const remove = h('button', { type: 'button', class: 'small', 'aria-label': `Remove column ${c.kind} ${c.name}` }, 'Remove');
        remove.addEventListener('click', () => {
          view.columns = view.columns.filter((x) => columnKey(x) !== columnKey(c));
          if (view.sort?.key === columnKey(c)) view.sort = null;
          drawList();
          changed();
        });
        return h('li', {}, h('span', { class: 'kind-tag' }, c.kind), ' ', h('code', {}, c.name), ' ', remove);
      }),
    );
  };
  const form = h('form', { class: 'column-add' }, kind, name, suggestions, add);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = { kind: kind.value as TaskColumnKind, name: name.value.trim() };
    if (!chosen.name || view.columns.some((c) => columnKey(c) === columnKey(chosen)) || view.columns.length >= TASK_COLUMNS_LIMITS.columns) return;
    view.columns = [...view.columns, chosen];
    name.value = '';
    drawList();
    changed();
  });
  drawList();
  return h('details', { class: 'column-picker' }, h('summary', { class: 'button' }, 'Columns'), h('div', { class: 'column-menu' }, form, list));
}

const ARROWS = { asc: ' ▲', desc: ' ▼' } as const;

/** A cell's text: numbers as metrics are shown, text as it is; "…" while unread, "—" when the Task has none. */
function cellText(values: ColumnValues, taskId: string, key: string): Node | string {
  const value = values.value(taskId, key);
  if (value === undefined) return h('span', { class: 'muted' }, values.known(taskId, key) ? '—' : '…');
  return typeof value === 'number' ? formatMetric(value) : String(value);
}

/**
 * The table columns of the chosen fields: a header that sorts by the column (ascending, then
 * descending, then not at all) and cells filled from `values`.
 */
export function chosenColumns(view: TableView, values: ColumnValues, changed: () => void): Column<TaskRow>[] {
  return view.columns.map((c) => {
    const key = columnKey(c);
    const dir = view.sort?.key === key ? view.sort.dir : undefined;
    const button = h('button', { type: 'button', class: 'sort-button', 'data-column': key, title: `${c.kind} ${c.name}`, 'aria-label': `Sort by ${c.kind} ${c.name}` }, c.name, dir ? ARROWS[dir] : '');
    button.addEventListener('click', () => {
      view.sort = dir === undefined ? { key, dir: 'asc' } : dir === 'asc' ? { key, dir: 'desc' } : null;
      changed();
    });
    return {
      label: c.name,
      width: 'minmax(90px, 0.8fr)',
      className: c.kind === 'metric' ? 'num' : 'mono',
      header: button,
      ...(dir ? { sorted: dir === 'asc' ? ('ascending' as const) : ('descending' as const) } : {}),
      render: (t: TaskRow) => cellText(values, t.task_id, key),
    };
  });
}
