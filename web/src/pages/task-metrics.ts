import { errorText, type Api } from '../api/client.js';
import type { MetricPoint, TaskMetricsChunk } from '../api/types.js';
import { sleep } from '../app/page.js';
import { h, notice } from '../ui/dom.js';
import { sparkline } from '../ui/sparkline.js';

/** Values kept per metric for its sparkline: the page holds this much whatever the Task reports. */
const RECENT = 120;
/** Windows read before the table is drawn again while a big file is caught up. */
const PAGES_PER_DRAW = 8;
/** How often a running Task's metrics are read again. */
const POLL_MS = 1000;

/** The table's columns, numbers aligned right under their headings. */
const COLUMNS: ReadonlyArray<readonly [string, string | null]> = [['metric', null], ['latest', 'num'], ['step', 'num'], ['points', 'num'], ['recent', null]];

interface Series {
  count: number;
  last: MetricPoint;
  recent: Array<number | null>;
}

/** A metric's value in a table cell: six significant digits, exponents for the very big and small. */
export function formatMetric(value: number | null): string {
  if (value === null) return 'NaN';
  const size = Math.abs(value);
  return size !== 0 && (size >= 1e6 || size < 1e-3) ? value.toExponential(3) : String(Number(value.toPrecision(6)));
}

/**
 * The Metrics card of a Task page: each metric the Task reported with its latest value, step,
 * point count and a sparkline of its recent values. Reads `read_task_metrics` from its cursor, so
 * each read takes only what was added; while the Task runs it reads again every second.
 */
export class MetricsPanel {
  readonly element = h('div', { class: 'metrics' });
  readonly #api: Api;
  readonly #taskId: string;
  readonly #signal: AbortSignal;
  readonly #series = new Map<string, Series>();
  #cursor = 0;
  #live = false;
  #readOnce = false;
  #error: string | null = null;
  /** Reads run one after another: two at the same cursor would count points twice. */
  #reads: Promise<void> = Promise.resolve();

  constructor(api: Api, taskId: string, signal: AbortSignal) {
    this.#api = api;
    this.#taskId = taskId;
    this.#signal = signal;
    if (!api.may('read_task_metrics')) this.#error = 'Your token may not read metrics (read_task_metrics).';
    this.#draw();
  }

  /** Reads every point added since the last read, then draws the table. */
  refresh(): Promise<void> {
    this.#reads = this.#reads.then(() => this.#readNew());
    return this.#reads;
  }

  /** Reads again every second while `active()` (the page follows a running Task; it refreshes once itself at each load). */
  async follow(active: () => boolean): Promise<void> {
    this.#live = true;
    for (;;) {
      await sleep(POLL_MS, this.#signal);
      if (!active() || this.#signal.aborted || this.#error !== null) break;
      await this.refresh();
    }
    this.#live = false;
  }

  async #readNew(): Promise<void> {
    if (this.#error !== null || this.#signal.aborted) return;
    try {
      for (let pages = 1; ; pages++) {
        const chunk = await this.#api.answer<TaskMetricsChunk>('read_task_metrics', { task_id: this.#taskId, cursor: this.#cursor }, { signal: this.#signal });
        this.#add(chunk);
        if (!chunk.has_more) break;
        if (pages % PAGES_PER_DRAW === 0) this.#draw();
      }
    } catch (err) {
      if (this.#signal.aborted) return;
      this.#error = errorText(err);
    }
    this.#readOnce = true;
    this.#draw();
  }

  #add(chunk: TaskMetricsChunk): void {
    // The Task ran again with a new file: what was counted belongs to the old one.
    if (chunk.reset) this.#series.clear();
    this.#cursor = chunk.cursor;
    for (const [name, points] of Object.entries(chunk.series)) {
      const last = points.at(-1);
      if (!last) continue;
      const series = this.#series.get(name) ?? { count: 0, last, recent: [] };
      series.count += points.length;
      series.last = last;
      series.recent.push(...points.slice(-RECENT).map((p) => p.value));
      if (series.recent.length > RECENT) series.recent.splice(0, series.recent.length - RECENT);
      this.#series.set(name, series);
    }
  }

  #draw(): void {
    if (this.#error !== null) return this.element.replaceChildren(notice(this.#error, 'error'));
    if (this.#series.size === 0) {
      const text = !this.#readOnce ? 'Reading metrics…' : this.#live ? 'No metrics reported yet.' : 'This Task reported no metrics.';
      return this.element.replaceChildren(notice(text, 'empty'));
    }
    const names = [...this.#series.keys()].sort();
    this.element.replaceChildren(
      h(
        'table',
        { class: 'grid metrics-table' },
        h('thead', {}, h('tr', {}, COLUMNS.map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
        h(
          'tbody',
          {},
          names.map((name) => {
            const s = this.#series.get(name)!;
            return h(
              'tr',
              { 'data-metric': name },
              h('td', {}, h('strong', {}, name)),
              h('td', { class: 'num metric-latest', title: String(s.last.value), 'data-value': String(s.last.value) }, formatMetric(s.last.value)),
              h('td', { class: 'num metric-step' }, s.last.step === undefined ? '—' : String(s.last.step)),
              h('td', { class: 'num metric-count' }, String(s.count)),
              h('td', {}, sparkline(s.recent, `${name}: last ${s.recent.length} values`)),
            );
          }),
        ),
      ),
    );
  }
}
