import type { Api } from '../api/client.js';
import type { TaskColumnValues } from '../api/types.js';
import { columnKey, TASK_COLUMN_KINDS, TASK_COLUMNS_LIMITS, type TaskColumnKind } from '../../../schemas/task-column-keys.js';
import type { TaskRow } from './task-feed.js';

/** A column the user added to the Tasks table. */
export interface ChosenColumn {
  kind: TaskColumnKind;
  name: string;
}

export type SortDirection = 'asc' | 'desc';

/** The user's Tasks-table view: added columns and the sort, kept in localStorage across reloads. */
export interface TableView {
  columns: ChosenColumn[];
  sort: { key: string; dir: SortDirection } | null;
}

/** A cell value as read_task_columns answers it. */
export type Cell = TaskColumnValues['values'][string][string];

const STORAGE_KEY = 'taskyard.tasks.view';
/** Values of a Task that has not ended are read again after this long, while its row is in view (metrics move). */
const LIVE_MS = 5000;

const isKind = (k: unknown): k is TaskColumnKind => TASK_COLUMN_KINDS.some((x) => x === k);

/** The saved view; anything unreadable (another version, a hand edit, no storage) is the empty view. */
export function loadView(): TableView {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<TableView> | null;
    const columns = (Array.isArray(saved?.columns) ? saved.columns : [])
      .filter((c): c is ChosenColumn => isKind(c?.kind) && typeof c.name === 'string' && c.name !== '')
      .slice(0, TASK_COLUMNS_LIMITS.columns);
    const sort = saved?.sort;
    const sorted = sort && columns.some((c) => columnKey(c) === sort.key) && (sort.dir === 'asc' || sort.dir === 'desc') ? { key: sort.key, dir: sort.dir } : null;
    return { columns, sort: sorted };
  } catch {
    return { columns: [], sort: null };
  }
}

export function saveView(view: TableView): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(view));
  } catch {
    // Storage full or disabled: the view lasts as long as the page.
  }
}

/**
 * Order of two cells: numbers by value, then text in code-unit order (booleans as their text);
 * a missing value or null (a NaN metric) comes last in either direction.
 */
export function compareCells(a: Cell | undefined, b: Cell | undefined, dir: SortDirection): number {
  const missingA = a === undefined || a === null;
  const missingB = b === undefined || b === null;
  if (missingA || missingB) return missingA === missingB ? 0 : missingA ? 1 : -1;
  const sign = dir === 'asc' ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return sign * (a - b);
  if (typeof a === 'number' || typeof b === 'number') return sign * (typeof a === 'number' ? -1 : 1);
  const ta = String(a);
  const tb = String(b);
  return sign * (ta < tb ? -1 : ta > tb ? 1 : 0);
}

interface Entry {
  /** State and end of the run the values were read for: a new run or an end reads them again. */
  stamp: string;
  at: number;
  keys: Set<string>;
  values: Record<string, Cell>;
}

const stampOf = (t: TaskRow) => `${t.state}|${t.finished_at ?? ''}`;

/**
 * The chosen columns' values, read with read_task_columns for the rows that need them (those in
 * view, or every row for the sort column), batched per frame and cached per Task until its run
 * changes; a Task still running is read again at most every few seconds while in view.
 */
export class ColumnValues {
  readonly #cache = new Map<string, Entry>();
  readonly #pending = new Map<string, { row: TaskRow; keys: Set<string> }>();
  /** Every column asked for, by key. */
  readonly #columns = new Map<string, ChosenColumn>();
  #scheduled = false;

  constructor(
    private readonly api: Api,
    private readonly signal: AbortSignal,
    private readonly loaded: () => void,
  ) {}

  /** The value of a column for a Task: undefined while not read or when it has none. */
  value(taskId: string, key: string): Cell | undefined {
    return this.#cache.get(taskId)?.values[key];
  }

  /** Whether a Task's value of a column has been read (a missing value then is truly missing). */
  known(taskId: string, key: string): boolean {
    return this.#cache.get(taskId)?.keys.has(key) ?? false;
  }

  /** Asks for `columns` of `rows` (read in the next batch unless cached and fresh). */
  want(rows: readonly TaskRow[], columns: readonly ChosenColumn[]): void {
    if (columns.length === 0) return;
    for (const c of columns) this.#columns.set(columnKey(c), c);
    const now = Date.now();
    for (const row of rows) {
      const entry = this.#cache.get(row.task_id);
      const fresh = entry && entry.stamp === stampOf(row) && (row.finished_at !== null || now - entry.at < LIVE_MS);
      const missing = columns.map(columnKey).filter((k) => !fresh || !entry.keys.has(k));
      if (missing.length === 0) continue;
      const pending = this.#pending.get(row.task_id) ?? { row, keys: new Set<string>() };
      for (const k of missing) pending.keys.add(k);
      this.#pending.set(row.task_id, pending);
    }
    if (this.#pending.size > 0 && !this.#scheduled) {
      this.#scheduled = true;
      requestAnimationFrame(() => void this.#flush());
    }
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    const keys = new Set(batch.flatMap((p) => [...p.keys]));
    const asked = [...keys].map((k) => this.#columns.get(k)!).slice(0, TASK_COLUMNS_LIMITS.columns);
    for (let i = 0; i < batch.length && asked.length > 0; i += TASK_COLUMNS_LIMITS.tasks) {
      const part = batch.slice(i, i + TASK_COLUMNS_LIMITS.tasks);
      // A failed read (a machine without read_task_columns) leaves the cells empty, as read: asking
      // again on every frame would only repeat the failure.
      const answer = await this.api
        .answer<TaskColumnValues>('read_task_columns', { task_ids: part.map((p) => p.row.task_id), columns: asked }, { signal: this.signal })
        .catch(() => null);
      if (this.signal.aborted) return;
      const at = Date.now();
      for (const { row } of part) {
        const old = this.#cache.get(row.task_id);
        const entry = old && old.stamp === stampOf(row) ? old : { stamp: stampOf(row), at, keys: new Set<string>(), values: {} };
        entry.at = at;
        for (const c of asked) {
          const key = columnKey(c);
          entry.keys.add(key);
          const value = answer?.values[row.task_id]?.[key];
          if (value === undefined) delete entry.values[key];
          else entry.values[key] = value;
        }
        this.#cache.set(row.task_id, entry);
      }
    }
    this.loaded();
  }
}
