import { errorText, type Api } from '../api/client.js';
import type { MachineHistory } from '../api/types.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { formatBytes, formatPercent } from '../ui/format.js';
import { MetricChart } from '../ui/metric-chart.js';

const GiB = 1024 ** 3;
/** Points of a running Task's CPU drawn in its sparkline. */
const SPARK_POINTS = 60;

/** What the page keeps of a running Task: its latest figures and its recent CPU. */
interface TaskFigures {
  runId: string;
  at: number;
  cpu: number | null;
  rss: number;
  gpuMemory: number | null;
  processes: number;
  recentCpu: Array<number | null>;
}

/** A small line of recent values (0-100 % of one core and more) across its width, as an inline SVG. */
function sparkline(values: ReadonlyArray<number | null>): SVGElement {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'sparkline');
  svg.setAttribute('viewBox', `0 0 ${SPARK_POINTS} 20`);
  svg.setAttribute('aria-hidden', 'true');
  const top = Math.max(100, ...values.map((v) => v ?? 0));
  const step = values.length > 1 ? SPARK_POINTS / (values.length - 1) : 0;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(20 - ((v ?? 0) / top) * 20).toFixed(1)}`).join(' ');
  const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
  line.setAttribute('points', points);
  svg.append(line);
  return svg;
}

/**
 * The Machine page's history: live charts of CPU, memory and each GPU's utilization over the
 * service's window (`read_machine_history`, read from its cursor so each poll takes only the new
 * samples), and a table of the running Tasks with their process tree's latest CPU, RSS and GPU
 * memory. Points older than the window are dropped from the charts, as the service drops them.
 */
export class MachineHistoryPanel {
  readonly #charts = h('div', { class: 'metric-charts' });
  readonly #tasks = h('div', {});
  readonly #status = h('p', { class: 'muted' }, 'Reading the history…');
  readonly element = h('div', { class: 'machine-history' }, this.#status, this.#charts, h('h3', {}, 'Running Tasks'), this.#tasks);
  readonly #api: Api;
  readonly #signal: AbortSignal;
  readonly #series = new Map<string, MetricChart>();
  readonly #running = new Map<string, TaskFigures>();
  #cursor = 0;
  /** The service's sampling interval, once known: the page polls no faster (and at most once a second). */
  intervalMs = 5000;

  constructor(api: Api, signal: AbortSignal) {
    this.#api = api;
    this.#signal = signal;
    signal.addEventListener('abort', () => this.#clear(), { once: true });
  }

  /** Reads the samples taken since the last read and draws them. */
  async refresh(): Promise<void> {
    if (!this.#api.may('read_machine_history')) {
      this.element.replaceChildren(notice('Your token may not read the machine history (read_machine_history).', 'empty'));
      return;
    }
    let answer: MachineHistory;
    try {
      answer = await this.#api.answer<MachineHistory>('read_machine_history', { since: this.#cursor }, { signal: this.#signal });
    } catch (err) {
      if (this.#signal.aborted) return;
      // A cursor the service no longer knows (it restarted with its clock behind): start over.
      if (this.#cursor !== 0) this.#clear();
      this.#status.replaceChildren(notice(errorText(err), 'error'));
      return;
    }
    this.intervalMs = Math.max(1000, answer.interval_ms);
    this.#cursor = answer.cursor;
    this.#add(answer);
    this.#status.textContent = `Sampled every ${answer.interval_ms / 1000} s, the last ${answer.window_s >= 3600 ? `${answer.window_s / 3600} h` : `${answer.window_s} s`}.`;
  }

  #chart(key: string, caption: string, percent = false): MetricChart {
    let chart = this.#series.get(key);
    if (!chart) {
      chart = new MetricChart(key, percent ? { yRange: [0, 100] } : {});
      chart.element.setAttribute('data-series', key);
      this.#series.set(key, chart);
      this.#charts.append(chart.element);
    }
    chart.element.querySelector('figcaption')!.textContent = caption;
    return chart;
  }

  #add(answer: MachineHistory): void {
    const { times } = answer;
    if (times.length > 0) {
      this.#chart('cpu', 'CPU %', true).appendTimes(times, answer.cpu_percent);
      const total = answer.memory_total_bytes;
      this.#chart('memory', `Memory used, GiB${total === null ? '' : ` of ${(total / GiB).toFixed(1)}`}`).appendTimes(times, answer.memory_used_bytes.map((b) => b / GiB));
      for (const gpu of answer.gpus) {
        const name = `GPU ${gpu.index}${gpu.name ? ` (${gpu.name})` : ''}`;
        this.#chart(`gpu-${gpu.vendor}-${gpu.index}`, `${name} utilization %`, true).appendTimes(times, gpu.utilization_percent);
      }
      const oldest = times.at(-1)! - answer.window_s * 1000;
      for (const chart of this.#series.values()) chart.dropBefore(oldest);
    }
    for (const chart of this.#series.values()) chart.draw();
    this.#updateTasks(answer);
  }

  /** Running Tasks are those in the latest sample; one that ended leaves the table. */
  #updateTasks(answer: MachineHistory): void {
    const latest = answer.times.at(-1);
    if (latest === undefined) return this.#drawTasks();
    for (const [id, series] of Object.entries(answer.tasks)) {
      const last = series.times.length - 1;
      const known = this.#running.get(id);
      const recentCpu = [...(known?.runId === series.run_id ? known.recentCpu : []), ...series.cpu_percent].slice(-SPARK_POINTS);
      this.#running.set(id, { runId: series.run_id, at: series.times[last]!, cpu: series.cpu_percent[last]!, rss: series.rss_bytes[last]!, gpuMemory: series.gpu_memory_bytes[last]!, processes: series.processes[last]!, recentCpu });
    }
    for (const [id, figures] of this.#running) if (figures.at < latest) this.#running.delete(id);
    this.#drawTasks();
  }

  #drawTasks(): void {
    if (this.#running.size === 0) return this.#tasks.replaceChildren(notice('No Task runs on this machine.', 'empty'));
    const rows = [...this.#running].sort(([a], [b]) => a.localeCompare(b));
    this.#tasks.replaceChildren(
      h(
        'table',
        { class: 'grid', 'aria-label': 'Running Tasks' },
        h('thead', {}, h('tr', {}, ['Task', 'CPU', 'recent CPU', 'RSS', 'GPU memory', 'processes'].map((c) => h('th', { scope: 'col' }, c)))),
        h(
          'tbody',
          {},
          rows.map(([id, f]) =>
            h(
              'tr',
              { 'data-task': id },
              h('td', {}, h('a', { href: href(['tasks', id]) }, id)),
              h('td', { class: 'num task-cpu' }, formatPercent(f.cpu)),
              h('td', {}, sparkline(f.recentCpu)),
              h('td', { class: 'num task-rss' }, formatBytes(f.rss)),
              h('td', { class: 'num task-gpu-memory' }, f.gpuMemory === null ? '—' : formatBytes(f.gpuMemory)),
              h('td', { class: 'num' }, String(f.processes)),
            ),
          ),
        ),
      ),
    );
  }

  #clear(): void {
    for (const chart of this.#series.values()) chart.destroy();
    this.#series.clear();
    this.#running.clear();
    this.#charts.replaceChildren();
    this.#cursor = 0;
  }
}
