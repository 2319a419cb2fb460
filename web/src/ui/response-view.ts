import type { JobResponse } from '../api/types.js';
import { h } from './dom.js';
import { jsonView } from './highlight.js';

/** A success / failure badge. */
export function outcomeBadge(success: boolean): HTMLElement {
  return h('span', { class: `badge ${success ? 'badge-ok' : 'badge-fail'}` }, success ? 'success' : 'failed');
}

/** An answer: text answers (versions, error texts) as text, everything else as highlighted JSON. */
export function answerView(answer: unknown): HTMLElement {
  if (typeof answer === 'string') return h('pre', { class: 'code answer-text', tabindex: 0 }, answer === '' ? '(empty string)' : answer);
  return jsonView(answer);
}

/** A whole JobResponse: outcome, answer and metadata, as the service returned them. */
export function responseView(res: JobResponse, elapsedMs?: number): HTMLElement {
  const meta = Object.keys(res.metadata ?? {}).length ? h('details', { class: 'metadata' }, h('summary', {}, 'metadata'), jsonView(res.metadata)) : null;
  return h(
    'section',
    { class: 'response', 'data-success': String(res.success), 'aria-label': 'Job response' },
    h('header', {}, outcomeBadge(res.success), elapsedMs === undefined ? null : h('span', { class: 'muted' }, `${Math.round(elapsedMs)} ms`)),
    answerView(res.answer),
    meta,
  );
}
