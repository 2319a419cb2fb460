import type { StreamEvent } from '../api/types.js';
import { h } from './dom.js';
import { formatBytes } from './format.js';
import { progressBar } from './progress-bar.js';

/** A live view of one SSE stream: progress bars by name, log text, artifacts, and every event. */
export interface EventLog {
  readonly element: HTMLElement;
  add(event: StreamEvent): void;
}

/** Keeps the raw list bounded: a chatty stream must not grow the page without end. */
const MAX_RAW = 500;

export function eventLog(): EventLog {
  const progress = h('div', { class: 'event-progress' });
  const bars = new Map<string, HTMLElement>();
  const log = h('pre', { class: 'code log', hidden: true, tabindex: 0, 'aria-label': 'Streamed log' });
  const artifacts = h('ul', { class: 'artifact-list', hidden: true });
  const raw = h('ol', { class: 'raw-events' });
  const count = h('span', { class: 'muted' }, '0 events');
  let seen = 0;
  const element = h(
    'section',
    { class: 'event-log', 'aria-label': 'Streamed events' },
    progress,
    log,
    artifacts,
    h('details', { class: 'raw' }, h('summary', {}, 'events ', count), raw),
  );

  function showProgress(name: string, percentage: number | null, done: boolean): void {
    const row = h('div', { class: 'step' }, h('span', { class: 'step-name' }, name), progressBar(done && percentage === null ? 100 : percentage, name), h('span', { class: 'step-pct' }, percentage === null ? (done ? 'done' : '…') : `${Math.round(percentage)} %`));
    const old = bars.get(name);
    if (old) old.replaceWith(row);
    else progress.append(row);
    bars.set(name, row);
  }

  return {
    element,
    add(event) {
      seen++;
      count.textContent = `${seen} event${seen === 1 ? '' : 's'}`;
      if (raw.childElementCount >= MAX_RAW) raw.firstElementChild?.remove();
      raw.append(h('li', {}, h('span', { class: `kind kind-${event.kind}` }, event.kind), ' ', h('code', {}, JSON.stringify(event))));
      if (event.kind === 'progress') showProgress(event.name, event.percentage, event.finished_at !== null);
      else if (event.kind === 'log') {
        if (event.reset) log.textContent = '';
        log.hidden = false;
        log.append(event.content);
        log.scrollTop = log.scrollHeight;
      } else if (event.kind === 'artifact') {
        artifacts.hidden = false;
        artifacts.append(h('li', {}, h('code', {}, event.path), ` ${formatBytes(event.size)} `, h('code', { class: 'hash' }, event.sha256)));
      }
    },
  };
}
