import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { MetricPoint } from '../api/types.js';
import { decimate } from '../../../core/series-decimation.js';
import { h } from './dom.js';

const HEIGHT = 180;
/** A color the stylesheet defines (uPlot draws on a canvas and takes colors as strings). */
function cssColor(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/**
 * One metric as a line chart (uPlot: canvas, made for long, growing time series). The x axis is
 * the step when the Task gave steps, else the time of each point. Points are appended as they
 * are read; the chart draws once it is in the page and has a width, and again after each batch.
 */
export class MetricChart {
  readonly element: HTMLElement;
  readonly #name: string;
  readonly #xs: number[] = [];
  readonly #ys: Array<number | null> = [];
  #byStep: boolean | null = null;
  #plot: uPlot | null = null;
  /** A fixed y range (percentages: 0 to 100), else uPlot fits the range to the data. */
  readonly #yRange: readonly [number, number] | undefined;
  readonly #resize = new ResizeObserver(() => this.#fit());

  constructor(name: string, opts: { yRange?: readonly [number, number] } = {}) {
    this.#name = name;
    this.#yRange = opts.yRange;
    this.element = h('figure', { class: 'metric-chart', 'data-metric': name, 'data-points': '0' }, h('figcaption', {}, name));
    this.#resize.observe(this.element);
  }

  get points(): number {
    return this.#xs.length;
  }

  /** Adds points in the order reported; a point without a step in a stepped series comes after the last one. */
  append(points: readonly MetricPoint[]): void {
    this.#byStep ??= points[0]?.step !== undefined;
    for (const p of points) {
      const last = this.#xs.at(-1);
      this.#xs.push(this.#byStep ? (p.step ?? (last === undefined ? 0 : last + 1)) : Date.parse(p.timestamp) / 1000);
      this.#ys.push(p.value);
    }
  }

  /** Adds points of a series over time: `times` in ms since the epoch, one value each. */
  appendTimes(times: readonly number[], values: ReadonlyArray<number | null>): void {
    this.#byStep = false;
    for (const [i, at] of times.entries()) {
      this.#xs.push(at / 1000);
      this.#ys.push(values[i] ?? null);
    }
  }

  /** Drops the points before `at` (ms since the epoch): a chart of a moving window keeps only it. */
  dropBefore(at: number): void {
    const first = this.#xs.findIndex((x) => x * 1000 >= at);
    const drop = first < 0 ? this.#xs.length : first;
    this.#xs.splice(0, drop);
    this.#ys.splice(0, drop);
  }

  /** What the canvas draws of the points at `width` pixels. */
  #shown(width: number): [number[], Array<number | null>] {
    return decimate(this.#xs, this.#ys, Math.max(1, Math.round(width)));
  }

  /** Draws what was appended (creating the chart the first time it has room). */
  draw(): void {
    this.element.setAttribute('data-points', String(this.#xs.length));
    if (this.#plot) return this.#plot.setData(this.#shown(this.#plot.width));
    const width = this.element.clientWidth;
    if (width === 0) return; // not in the page yet: the resize observer draws it once it is
    const stroke = cssColor('--accent', '#2563eb');
    const grid = { stroke: cssColor('--border', '#e5e7eb'), width: 1 };
    this.#plot = new uPlot(
      {
        width,
        height: HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: !this.#byStep }, ...(this.#yRange ? { y: { range: [this.#yRange[0], this.#yRange[1]] } } : {}) },
        axes: [
          { grid, stroke: cssColor('--muted', '#6b7280'), ...(this.#byStep ? { label: 'step' } : {}) },
          { grid, stroke: cssColor('--muted', '#6b7280'), size: 60 },
        ],
        // uPlot's own rule shows points only while they are sparse (a lone point is seen too).
        series: [{}, { label: this.#name, stroke, width: 1.5, spanGaps: false }],
      },
      this.#shown(width),
      this.element,
    );
  }

  #fit(): void {
    const width = this.element.clientWidth;
    if (width === 0) return;
    if (!this.#plot) return this.draw();
    if (Math.abs(this.#plot.width - width) <= 1) return;
    this.#plot.setSize({ width, height: HEIGHT });
    this.#plot.setData(this.#shown(width));
  }

  destroy(): void {
    this.#resize.disconnect();
    this.#plot?.destroy();
  }
}

/** Line colors of overlaid runs, told apart without relying on one hue. */
const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563', '#ca8a04'];

/** One run's points of a metric, for an overlay. */
export interface RunSeries {
  readonly label: string;
  readonly xs: readonly number[];
  readonly ys: ReadonlyArray<number | null>;
}

/**
 * One metric of several runs in one chart (compare), each run a line of its own color with a
 * legend. Each series is decimated to the chart's width before the runs are joined on x.
 */
export function overlayChart(name: string, runs: readonly RunSeries[], byStep: boolean, width: number): HTMLElement {
  const element = h('figure', { class: 'metric-chart overlay', 'data-metric': name, 'data-series': String(runs.length) }, h('figcaption', {}, name));
  const columns = Math.max(1, Math.round(width));
  const data = uPlot.join(runs.map((r) => decimate(r.xs, r.ys, columns) as uPlot.AlignedData));
  const grid = { stroke: cssColor('--border', '#e5e7eb'), width: 1 };
  const muted = cssColor('--muted', '#6b7280');
  new uPlot(
    {
      width: columns,
      height: HEIGHT,
      scales: { x: { time: !byStep } },
      axes: [
        { grid, stroke: muted, ...(byStep ? { label: 'step' } : {}) },
        { grid, stroke: muted, size: 60 },
      ],
      series: [{}, ...runs.map((r, i) => ({ label: r.label, stroke: PALETTE[i % PALETTE.length]!, width: 1.5, spanGaps: true }))],
    },
    data,
    element,
  );
  return element;
}
