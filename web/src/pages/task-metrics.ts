import { errorText, type Api } from '../api/client.js';
import type { MetricPoint, TaskMetricsChunk } from '../api/types.js';
import { sleep } from '../app/page.js';
import { h, notice } from '../ui/dom.js';
import { MetricChart } from '../ui/metric-chart.js';
/** Windows read before the table is drawn again while a big file is caught up. */
const PAGES_PER_DRAW = 8;
/** How often a running Task's metrics are read again. */
const POLL_MS = 1000;

/** The table's columns, numbers aligned right under their headings. */
const COLUMNS: ReadonlyArray<readonly [string, string | null]> = [['metric', null], ['latest', 'num'], ['step', 'num'], ['points', 'num']];

/** A metric: its latest point, and its chart, which holds every point read. */
interface Series {
  last: MetricPoint;
  readonly chart: MetricChart;
}

/** A metric's value in a table cell: six significant digits, exponents for the very big and small. */
export function formatMetric(value: number | null): string {
  if (value === null) return 'NaN';
  const size = Math.abs(value);
  return size !== 0 && (size >= 1e6 || size < 1e-3) ? value.toExponential(3) : String(Number(value.toPrecision(6)));
}

/**
 * The Metrics card of a Task page: a table of each metric the Task reported with its latest
 * value, step and point count, and a line chart per metric with every point. Reads
 * `read_task_metrics` from its cursor, so each read takes only what was added; while the Task
 * runs it reads again every second and the charts grow.
 */
export class MetricsPanel {
  readonly #table = h('div', {});
  readonly #charts = h('div', { class: 'metric-charts' });
  readonly element = h('div', { class: 'metrics' }, this.#table, this.#charts);
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
    signal.addEventListener('abort', () => this.#clear(), { once: true });
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
    // The Task ran again with a new file: what was read belongs to the old one.
    if (chunk.reset) this.#clear();
    this.#cursor = chunk.cursor;
    for (const [name, points] of Object.entries(chunk.series)) {
      const last = points.at(-1);
      if (!last) continue;
      let series = this.#series.get(name);
      if (!series) this.#series.set(name, (series = { last, chart: new MetricChart(name) }));
      series.last = last;
      series.chart.append(points);
    }
  }

  #clear(): void {
    for (const s of this.#series.values()) s.chart.destroy();
    this.#series.clear();
    this.#charts.replaceChildren();
  }

  #draw(): void {
    if (this.#error !== null) return this.#table.replaceChildren(notice(this.#error, 'error'));
    if (this.#series.size === 0) {
      const text = !this.#readOnce ? 'Reading metrics…' : this.#live ? 'No metrics reported yet.' : 'This Task reported no metrics.';
      return this.#table.replaceChildren(notice(text, 'empty'));
    }
    const names = [...this.#series.keys()].sort();
    // Charts stay (each keeps its canvas and points); only their order follows the names.
    this.#charts.replaceChildren(...names.map((name) => this.#series.get(name)!.chart.element));
    for (const name of names) this.#series.get(name)!.chart.draw();
    this.#table.replaceChildren(
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
              h('td', { class: 'num metric-count' }, String(s.chart.points)),
            );
          }),
        ),
      ),
    );
  }
}
