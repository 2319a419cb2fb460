import { h } from './dom.js';

/** An accessible progress bar; `null` percentage shows an indeterminate (striped) bar. */
export function progressBar(percentage: number | null, label: string): HTMLElement {
  const known = percentage !== null && Number.isFinite(percentage);
  const pct = known ? Math.max(0, Math.min(100, percentage)) : 0;
  // Width through CSSOM: the content security policy forbids inline style attributes.
  const fill = h('div', { class: 'progress-fill' });
  fill.style.width = `${known ? pct : 100}%`;
  return h(
    'div',
    {
      class: `progress${known ? '' : ' progress-indeterminate'}`,
      role: 'progressbar',
      'aria-label': label,
      'aria-valuemin': 0,
      'aria-valuemax': 100,
      'aria-valuenow': known ? Math.round(pct) : undefined,
    },
    fill,
  );
}
