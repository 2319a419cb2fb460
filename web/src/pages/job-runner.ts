import { type Api, errorText } from '../api/client.js';
import type { JobDescriptor } from '../api/types.js';
import { h, notice } from '../ui/dom.js';
import { renderMarkdown } from '../ui/markdown.js';
import { eventLog } from '../ui/event-log.js';
import { FormError, buildSchemaForm } from '../ui/schema-form.js';
import { responseView } from '../ui/response-view.js';

/**
 * One Job's panel: its description, a form built from its input schema, and two ways to call
 * it: a plain call showing the JobResponse, or a streamed call showing the SSE events live.
 */
export function jobRunner(job: JobDescriptor, api: Api, signal: AbortSignal): HTMLElement {
  const form = buildSchemaForm(job.input_schema);
  const output = h('div', { class: 'job-output', 'aria-live': 'polite' });
  const callButton = h('button', { type: 'submit', class: 'primary' }, 'Call');
  const streamButton = h('button', { type: 'button' }, 'Stream events');
  const stopButton = h('button', { type: 'button', class: 'ghost', hidden: true }, 'Stop');
  let running: AbortController | null = null;

  const formEl = h(
    'form',
    { class: 'schema-form', 'aria-label': `Arguments of ${job.name}`, novalidate: false },
    form.rows.length ? form.rows : h('p', { class: 'muted' }, 'This Job takes no arguments.'),
    h('div', { class: 'actions' }, callButton, streamButton, stopButton),
  );

  /** Reads the form, runs `work` with a fresh abort controller, and restores the buttons. */
  async function run(work: (args: Record<string, unknown>, signal: AbortSignal) => Promise<void>): Promise<void> {
    if (!formEl.reportValidity()) return;
    let args: Record<string, unknown>;
    try {
      args = form.read();
    } catch (err) {
      output.replaceChildren(notice(err instanceof FormError ? err.message : String(err), 'error'));
      return;
    }
    running = new AbortController();
    const stop = AbortSignal.any([running.signal, signal]);
    callButton.disabled = streamButton.disabled = true;
    stopButton.hidden = false;
    try {
      await work(args, stop);
    } catch (err) {
      output.append(notice(errorText(err), 'error'));
    } finally {
      callButton.disabled = streamButton.disabled = false;
      stopButton.hidden = true;
      running = null;
    }
  }

  formEl.addEventListener('submit', (e) => {
    e.preventDefault();
    void run(async (args, stop) => {
      output.replaceChildren(notice(`Calling ${job.name}…`));
      const started = performance.now();
      const res = await api.call(job.name, args, { signal: stop });
      output.replaceChildren(responseView(res, performance.now() - started));
    });
  });
  streamButton.addEventListener('click', () => {
    void run(async (args, stop) => {
      const events = eventLog();
      output.replaceChildren(events.element);
      const started = performance.now();
      const result = await api.stream(job.name, args, (e) => e.kind !== 'result' && events.add(e), stop);
      output.append(responseView(result, performance.now() - started));
    });
  });
  stopButton.addEventListener('click', () => running?.abort());

  return h(
    'article',
    { class: 'job-runner card', 'aria-labelledby': 'job-title' },
    h('h2', { id: 'job-title' }, h('code', {}, job.name)),
    h('div', { class: 'description markdown' }, renderMarkdown(job.description)),
    formEl,
    output,
  );
}
