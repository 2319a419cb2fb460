import { isObject } from '../../../core/is-object.js';
import { errorText } from '../api/client.js';
import type { JsonSchema, TaskDefinition, TaskHandle, TaskStatus } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { href, navigate } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { renderMarkdown } from '../ui/markdown.js';
import { answerView } from '../ui/response-view.js';
import { buildSchemaForm, FormError } from '../ui/schema-form.js';

/** A description's first paragraph, rendered (a card is a link: links inside it become their text). */
function summaryOf(description: string): HTMLElement {
  const summary = h('small', { class: 'def-summary markdown' }, renderMarkdown(description.split(/\n\s*\n/)[0] ?? ''));
  for (const a of summary.querySelectorAll('a')) a.replaceWith(...a.childNodes);
  return summary;
}

function definitionCard(def: TaskDefinition, current: boolean): HTMLElement {
  // The task type is shown where it says something the name does not.
  const type = def.task_type === def.name ? null : h('span', { class: 'badge', title: 'task type' }, def.task_type);
  return h(
    'a',
    { class: 'def-card', href: href(['tasks', 'new', def.name]), 'aria-current': current ? 'page' : undefined },
    h('div', {}, h('code', { class: 'def-name' }, def.name), ' ', type, def.source === 'plugin' ? h('span', { class: 'badge', title: 'plugin' }, def.plugin ?? 'plugin') : null),
    summaryOf(def.description),
  );
}

/** `schema` with `values` as the defaults of its properties (nested objects too): the form starts filled with them. */
function prefilled(schema: JsonSchema, values: Record<string, unknown>): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, prop]) => {
      if (!(name in values)) return [name, prop];
      const value = values[name];
      return [name, isObject(value) && prop.properties ? prefilled(prop, value) : { ...prop, default: value }];
    }),
  );
  return { ...schema, properties };
}

/**
 * "Run again with changes": the inputs of the Task `from` as the form's starting values, under a
 * new name, with `from` added to its source_tasks (the new Task derives from it).
 */
function rerunInputs(from: TaskStatus): Record<string, unknown> {
  const sources = String(from.config['source_tasks'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return { ...from.config, task_name: null, source_tasks: [...new Set([...sources, from.task_id])].join(',') };
}

/** The submit form of one Task definition, built from its input schema (filled with `from`'s inputs when rerunning). */
function submitForm(def: TaskDefinition, ctx: PageContext, from: TaskStatus | null): HTMLElement {
  const form = buildSchemaForm(from ? prefilled(def.input_schema, rerunInputs(from)) : def.input_schema);
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
  const rerun = from ? h('p', { class: 'rerun-of notice' }, 'Run again with changes: the inputs of ', h('a', { href: href(['tasks', from.task_id]) }, h('code', {}, from.task_id)), ', which the new Task lists in source_tasks.') : null;
  return h('article', { class: 'card' }, h('h2', {}, 'New ', h('code', {}, def.name), ' task'), rerun, h('div', { class: 'description markdown' }, renderMarkdown(def.description)), el);
}

/** The "New task" page: installed Task definitions, and the chosen one's submit form. */
export function renderTaskSubmit(container: HTMLElement, ctx: PageContext, selected: string | null): void {
  const list = h('nav', { class: 'def-list', 'aria-label': 'Task definitions' }, notice('Loading definitions…'));
  const detail = h('div', {});
  container.replaceChildren(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: href(['tasks']) }, 'Tasks'), ' / new'),
    h('div', { class: 'split' }, list, detail),
  );
  const fromId = ctx.location.query.get('from');
  const from = fromId ? ctx.api.answer<TaskStatus>('status', { task_id: fromId }, { signal: ctx.signal }) : Promise.resolve(null);
  Promise.all([ctx.api.answer<TaskDefinition[]>('list_installed_task_definitions', {}, { signal: ctx.signal }), from])
    .then(([defs, fromStatus]) => {
      list.replaceChildren(...defs.map((d) => definitionCard(d, d.name === selected)));
      const def = defs.find((d) => d.name === selected);
      if (def) detail.replaceChildren(submitForm(def, ctx, fromStatus));
      else detail.replaceChildren(selected ? notice(`No Task definition named ${selected}`, 'error') : h('div', { class: 'card intro' }, h('h2', {}, 'New task'), h('p', {}, 'Pick a Task definition; its form is built from the definition’s input schema.')));
    })
    .catch((err: unknown) => list.replaceChildren(notice(errorText(err), 'error')));
}
