import { errorText } from '../api/client.js';
import type { TaskDefinition, TaskHandle } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { href, navigate } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { renderMarkdown } from '../ui/markdown.js';
import { answerView } from '../ui/response-view.js';
import { buildSchemaForm, FormError } from '../ui/schema-form.js';

function definitionCard(def: TaskDefinition, current: boolean): HTMLElement {
  return h(
    'a',
    { class: 'def-card', href: href(['tasks', 'new', def.name]), 'aria-current': current ? 'page' : undefined },
    h('div', {}, h('code', { class: 'def-name' }, def.name), ' ', h('span', { class: 'badge' }, def.task_type), def.source === 'plugin' ? h('span', { class: 'badge' }, def.plugin ?? 'plugin') : null),
    h('small', {}, def.description.split('\n')[0] ?? ''),
  );
}

/** The submit form of one Task definition, built from its input schema. */
function submitForm(def: TaskDefinition, ctx: PageContext): HTMLElement {
  const form = buildSchemaForm(def.input_schema);
  const output = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'submit', class: 'primary' }, `Submit ${def.name}`);
  const el = h('form', { class: 'schema-form', 'aria-label': `Inputs of ${def.name}` }, form.rows, h('div', { class: 'actions' }, button), output);
  el.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!el.reportValidity()) return;
    let inputs: Record<string, unknown>;
    try {
      inputs = form.read();
    } catch (err) {
      output.replaceChildren(notice(err instanceof FormError ? err.message : String(err), 'error'));
      return;
    }
    button.disabled = true;
    ctx.api
      .call<TaskHandle>('submit', { ...inputs, task: def.name }, { signal: ctx.signal })
      .then((res) => {
        if (res.success) navigate(href(['tasks', res.answer.task_id]));
        else output.replaceChildren(h('div', { class: 'notice notice-error', role: 'alert' }, answerView(res.answer)));
      })
      .catch((err: unknown) => output.replaceChildren(notice(errorText(err), 'error')))
      .finally(() => (button.disabled = false));
  });
  return h('article', { class: 'card' }, h('h2', {}, 'New ', h('code', {}, def.name), ' task'), h('div', { class: 'description markdown' }, renderMarkdown(def.description)), el);
}

/** The "New task" page: installed Task definitions, and the chosen one's submit form. */
export function renderTaskSubmit(container: HTMLElement, ctx: PageContext, selected: string | null): void {
  const list = h('nav', { class: 'def-list', 'aria-label': 'Task definitions' }, notice('Loading definitions…'));
  const detail = h('div', {});
  container.replaceChildren(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: href(['tasks']) }, 'Tasks'), ' / new'),
    h('div', { class: 'split' }, list, detail),
  );
  ctx.api
    .answer<TaskDefinition[]>('list_installed_task_definitions', {}, { signal: ctx.signal })
    .then((defs) => {
      list.replaceChildren(...defs.map((d) => definitionCard(d, d.name === selected)));
      const def = defs.find((d) => d.name === selected);
      if (def) detail.replaceChildren(submitForm(def, ctx));
      else detail.replaceChildren(selected ? notice(`No Task definition named ${selected}`, 'error') : h('div', { class: 'card intro' }, h('h2', {}, 'New task'), h('p', {}, 'Pick a Task definition; its form is built from the definition’s input schema.')));
    })
    .catch((err: unknown) => list.replaceChildren(notice(errorText(err), 'error')));
}
