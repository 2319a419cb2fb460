import { errorText } from '../api/client.js';
import type { TaskMetricsChunk, TaskStatus } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { durationBetween, formatDuration } from '../ui/format.js';
import { overlayChart, type RunSeries } from '../ui/metric-chart.js';
import { instanceName, stateBadge } from '../ui/task-bits.js';
import { formatMetric } from './task-metrics.js';

/** Runs compared at most: a wider table stops being readable. */
export const MAX_COMPARED = 8;
/** Points read per run and metric at most (the newest are dropped past it): a compare is a look, not an export. */
const MAX_POINTS = 200_000;

interface Series {
  xs: number[];
  ys: Array<number | null>;
  byStep: boolean;
}

/** Every metric a Task reported, read window by window from cursor 0. */
async function readSeries(ctx: PageContext, taskId: string): Promise<Map<string, Series>> {
  const all = new Map<string, Series>();
  let cursor = 0;
  let points = 0;
  for (;;) {
    const chunk = await ctx.api.answer<TaskMetricsChunk>('read_task_metrics', { task_id: taskId, cursor, max_points: 50_000 }, { signal: ctx.signal });
    for (const [name, list] of Object.entries(chunk.series)) {
      let s = all.get(name);
      if (!s) all.set(name, (s = { xs: [], ys: [], byStep: list[0]?.step !== undefined }));
      for (const p of list) {
        s.xs.push(s.byStep ? (p.step ?? (s.xs.at(-1) ?? -1) + 1) : Date.parse(p.timestamp) / 1000);
        s.ys.push(p.value);
      }
      points += list.length;
    }
    cursor = chunk.cursor;
    if (!chunk.has_more || points >= MAX_POINTS) return all;
  }
}

const shown = (value: unknown): string => (value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));

/** Rows of `field → value per run`, a row whose values differ marked (`differs`). */
function sideBySide(label: string, runs: readonly TaskStatus[], values: ReadonlyArray<Record<string, unknown>>): HTMLElement {
  const keys = [...new Set(values.flatMap((v) => Object.keys(v)))].sort();
  if (keys.length === 0) return h('section', { class: 'card', 'aria-label': label }, h('h2', {}, label), notice('Nothing to compare.', 'empty'));
  return h(
    'section',
    { class: 'card', 'aria-label': label },
    h('h2', {}, label),
    h(
      'table',
      { class: 'grid compare-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'field'), runs.map((r) => h('th', { scope: 'col' }, instanceName(r.task_id))))),
      h(
        'tbody',
        {},
        keys.map((key) => {
          const cells = values.map((v) => shown(v[key]));
          const differs = new Set(cells).size > 1;
          return h('tr', { 'data-field': key, class: differs ? 'differs' : undefined }, h('th', { scope: 'row' }, key), cells.map((c) => h('td', { class: 'mono' }, c)));
        }),
      ),
    ),
  );
}

/**
 * Compare runs (`#/compare?ids=a,b,c`): their inputs and outputs side by side with the fields
 * that differ marked, the final value of each metric, and each metric's curves overlaid.
 */
export function renderCompare(container: HTMLElement, ctx: PageContext): void {
  const ids = [...new Set((ctx.location.query.get('ids') ?? '').split(',').map((s) => s.trim()).filter(Boolean))].slice(0, MAX_COMPARED);
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: href(['tasks']) }, 'Tasks'), ` / compare ${ids.length} runs`);
  if (ids.length < 2) return container.replaceChildren(crumbs, notice('Select two or more Tasks in the Tasks table to compare them.', 'empty'));
  const charts = h('div', { class: 'metric-charts' }, notice('Reading metrics…'));
  container.replaceChildren(crumbs, notice('Loading…'));
  Promise.all(ids.map((id) => ctx.api.answer<TaskStatus>('status', { task_id: id }, { signal: ctx.signal })))
    .then(async (runs) => {
      const results = runs.map((r) => {
        const { artifacts, ...rest } = r.result as Record<string, unknown> & { artifacts?: Record<string, { sha256: string }> };
        // Artifacts compare by content: the same checksum is the same bytes.
        for (const [name, a] of Object.entries(artifacts ?? {})) rest[`artifacts.${name}`] = a.sha256.slice(0, 12);
        return rest;
      });
      const facts = runs.map((r) => ({ state: r.state, task: r.task_name, duration: formatDuration(durationBetween(r.started_at, r.finished_at)), exit_code: r.exit_code }));
      const finals = h('div', {}, notice('Reading metrics…'));
      container.replaceChildren(
        crumbs,
        h('div', { class: 'page-head' }, h('h1', {}, 'Compare runs'), ...runs.map((r) => h('a', { href: href(['tasks', r.task_id]), class: 'compare-run' }, stateBadge(r.state), ' ', h('code', {}, instanceName(r.task_id))))),
        sideBySide('Runs', runs, facts),
        sideBySide('Inputs', runs, runs.map((r) => r.config)),
        sideBySide('Outputs', runs, results),
        h('section', { class: 'card', 'aria-label': 'Final metrics' }, h('h2', {}, 'Final metrics'), finals),
        h('section', { class: 'card', 'aria-label': 'Metric curves' }, h('h2', {}, 'Metric curves'), charts),
      );
      const series = ctx.api.may('read_task_metrics') ? await Promise.all(runs.map((r) => readSeries(ctx, r.task_id))) : runs.map(() => new Map<string, Series>());
      const names = [...new Set(series.flatMap((s) => [...s.keys()]))].sort();
      if (names.length === 0) {
        finals.replaceChildren(notice('None of these runs reported metrics.', 'empty'));
        return charts.replaceChildren();
      }
      const last = series.map((s) => Object.fromEntries(names.map((n) => [n, s.get(n) ? formatMetric(s.get(n)!.ys.at(-1) ?? null) : undefined])));
      finals.replaceChildren(sideBySide('Final values', runs, last).querySelector('table')!);
      const width = Math.max(280, Math.floor((charts.clientWidth || 900) / 2) - 12);
      charts.replaceChildren(
        ...names.map((name) => {
          const lines: RunSeries[] = [];
          series.forEach((s, i) => {
            const one = s.get(name);
            if (one) lines.push({ label: instanceName(runs[i]!.task_id), xs: one.xs, ys: one.ys });
          });
          const byStep = series.every((s) => s.get(name)?.byStep !== false);
          return overlayChart(name, lines, byStep, width);
        }),
      );
    })
    .catch((err: unknown) => {
      if (!ctx.signal.aborted) container.replaceChildren(crumbs, notice(errorText(err), 'error'));
    });
}
