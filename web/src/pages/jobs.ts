import { errorText } from '../api/client.js';
import type { JobDescriptor } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { jobRunner } from './job-runner.js';

/** First sentence of a description, for the list. */
function summary(description: string): string {
  const first = description.split(/(?<=\.)\s|\n/)[0] ?? '';
  return first.length > 120 ? `${first.slice(0, 117)}…` : first;
}

/** The Jobs page: every public Job of the selected machine, and the chosen one's runner. */
export function renderJobs(container: HTMLElement, ctx: PageContext): void {
  const selected = ctx.location.segments[1] ?? null;
  const list = h('nav', { class: 'job-list', 'aria-label': 'Jobs' }, notice('Loading the catalog…'));
  const detail = h('div', { class: 'job-detail' });
  container.replaceChildren(h('div', { class: 'split' }, list, detail));

  ctx.api
    .catalog(ctx.signal)
    .then((jobs) => {
      if (ctx.signal.aborted) return;
      const filter = h('input', { type: 'search', placeholder: `Filter ${jobs.length} Jobs`, 'aria-label': 'Filter Jobs' });
      const items = jobs.map((job) => ({ job, el: jobLink(job, job.name === selected) }));
      filter.addEventListener('input', () => {
        const q = filter.value.toLowerCase();
        for (const { job, el } of items) el.hidden = !!q && !job.name.toLowerCase().includes(q) && !job.description.toLowerCase().includes(q);
      });
      list.replaceChildren(filter, h('ul', {}, items.map((i) => i.el)));
      const job = jobs.find((j) => j.name === selected);
      if (job) detail.replaceChildren(jobRunner(job, ctx.api, ctx.signal));
      else if (selected) detail.replaceChildren(notice(`No public Job named ${selected}`, 'error'));
      else detail.replaceChildren(h('div', { class: 'card intro' }, h('h2', {}, 'Jobs'), h('p', {}, `${jobs.length} public Jobs. Pick one to see its description and call it from a form built from its input schema.`)));
    })
    .catch((err: unknown) => list.replaceChildren(notice(errorText(err), 'error')));
}

function jobLink(job: JobDescriptor, current: boolean): HTMLElement {
  return h(
    'li',
    {},
    h('a', { href: href(['jobs', job.name]), 'aria-current': current ? 'page' : undefined }, h('code', {}, job.name), h('small', {}, summary(job.description))),
  );
}
