import { ApiError, type Api } from '../api/client.js';
import type { TaskStatus, TaskStatusPage } from '../api/types.js';
import { TASK_ROW_FIELDS, type TaskRowField } from '../../../schemas/task-rows.js';

/** What the Tasks table shows of a Task: the fields the feed asks for. */
export type TaskRow = Pick<TaskStatus, 'task_id' | TaskRowField>;

/** Asked of every query: a row's fields only (a poll after ten changes is ~3 KB instead of ~10). */
const FIELDS = { fields: [...TASK_ROW_FIELDS] };

/** Statuses per page of the first read. */
const PAGE = 1000;

/** The listing order: created_at, then task_id, both descending. */
function newestFirst(a: TaskRow, b: TaskRow): number {
  const ca = a.created_at ?? '';
  const cb = b.created_at ?? '';
  if (ca !== cb) return ca < cb ? 1 : -1;
  return a.task_id < b.task_id ? 1 : a.task_id > b.task_id ? -1 : 0;
}

/**
 * Every Task of a machine, mirrored in the page through `query_task_statuses`: read once page by
 * page, then kept fresh by asking only for what changed since the last answer (a few hundred
 * bytes per refresh instead of the whole history).
 */
export class TaskFeed {
  readonly #byId = new Map<string, TaskRow>();
  #rows: TaskRow[] = [];
  #version: string | undefined;
  #legacy = false;

  constructor(private readonly api: Api) {}

  /** The Tasks, newest first (do not modify). */
  get rows(): readonly TaskRow[] {
    return this.#rows;
  }

  /** Brings the mirror up to date; true when something changed. */
  async refresh(signal: AbortSignal): Promise<boolean> {
    if (this.#version !== undefined) {
      const delta = await this.api.answer<TaskStatusPage>('query_task_statuses', { changed_since: this.#version, ...FIELDS }, { signal });
      if (!delta.reset) {
        this.#version = delta.version;
        for (const id of delta.deleted) this.#byId.delete(id);
        for (const status of delta.items) this.#byId.set(status.task_id, status);
        return this.#reorder(delta.items.length + delta.deleted.length > 0);
      }
    }
    // First read, or the service restarted: read every page again.
    this.#byId.clear();
    if (this.#legacy) return this.#readAll(signal);
    let cursor: string | null = null;
    let version: string | undefined;
    do {
      let page: TaskStatusPage;
      try {
        page = await this.api.answer<TaskStatusPage>('query_task_statuses', { limit: PAGE, ...FIELDS, ...(cursor ? { cursor } : {}) }, { signal });
      } catch (err) {
        // A machine running an older service has no query_task_statuses: it is read whole each time.
        if (!(err instanceof ApiError && err.status === 404) || cursor) throw err;
        this.#legacy = true;
        return this.#readAll(signal);
      }
      // The first page's version: whatever changes while later pages are read comes with the next refresh.
      version ??= page.version;
      for (const status of page.items) this.#byId.set(status.task_id, status);
      cursor = page.next_cursor;
    } while (cursor);
    this.#version = version;
    return this.#reorder(true);
  }

  async #readAll(signal: AbortSignal): Promise<boolean> {
    this.#rows = await this.api.answer<TaskStatus[]>('list_task_statuses', {}, { signal });
    return true;
  }

  #reorder(changed: boolean): boolean {
    if (changed) this.#rows = [...this.#byId.values()].sort(newestFirst);
    return changed;
  }
}
