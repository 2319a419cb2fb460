import type { JsonSchema } from '../api/types.js';
import { h } from './dom.js';
import { checkboxField, enumValues, type Field, fieldId, FormError, inputField, jsonField, type Read, selectField, unwrapNullable } from './schema-field.js';

export { FormError } from './schema-field.js';

/** A short type label for the field's caption, e.g. `integer`, `string[]`, `"a" | "b"`. */
function typeLabel(schema: JsonSchema): string {
  const values = enumValues(schema);
  if (values) return values.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') return `${schema.items ? typeLabel(unwrapNullable(schema.items).schema) : 'any'}[]`;
  return Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'json');
}

/** Chooses the control for one schema node (recursing for arrays and objects). */
function buildField(raw: JsonSchema, name: string, required: boolean, depth: number): Field {
  const { schema, nullable } = unwrapNullable(raw);
  const id = fieldId();
  const values = enumValues(schema);
  if (values) return selectField(id, values, schema, required);
  switch (schema.type) {
    case 'string':
    case 'integer':
    case 'number':
      return inputField(id, schema, required, nullable);
    case 'boolean':
      return checkboxField(id, schema, required);
    case 'array':
      return depth < 4 && schema.items ? arrayField(schema, name, required, depth) : jsonField(id, schema, name);
    case 'object':
      return depth < 4 && schema.properties && Object.keys(schema.properties).length ? objectField(schema, required, depth + 1).field : jsonField(id, schema, name);
    default:
      return jsonField(id, schema, name);
  }
}

/** A labelled row: caption with type and required mark, the control, and the description. */
function row(name: string, schema: JsonSchema, required: boolean, field: Field): HTMLElement {
  const control = field.element.matches('input, select, textarea') ? field.element : null;
  const help = schema.description ? h('small', { class: 'help', id: control ? `${control.id}-help` : undefined }, schema.description) : null;
  if (control && help) control.setAttribute('aria-describedby', help.id);
  // The property name, so scripts and tests can find a control without knowing generated ids.
  control?.setAttribute('name', name);
  const caption = [h('span', { class: 'field-name' }, name), required ? h('span', { class: 'req', title: 'required' }, '*') : null, h('span', { class: 'field-type' }, typeLabel(unwrapNullable(schema).schema))];
  const label = control ? h('label', { for: control.id }, caption) : h('div', { class: 'label' }, caption);
  return h('div', { class: `field field-${control instanceof HTMLInputElement ? control.type : 'block'}` }, label, field.element, help);
}

/** Repeated items with add/remove buttons; defaults prefill the list. */
function arrayField(schema: JsonSchema, name: string, required: boolean, depth: number): Field {
  const itemSchema = schema.items!;
  const items: Array<{ field: Field; el: HTMLElement }> = [];
  const list = h('div', { class: 'array-items' });
  const add = (initial?: unknown) => {
    const field = buildField(initial === undefined ? itemSchema : { ...itemSchema, default: initial }, `${name}[]`, true, depth + 1);
    const entry = { field, el: h('div', { class: 'array-item' }) };
    const remove = h('button', { type: 'button', class: 'icon', 'aria-label': `Remove item from ${name}`, title: 'Remove' }, '×');
    remove.addEventListener('click', () => {
      items.splice(items.indexOf(entry), 1);
      entry.el.remove();
    });
    entry.el.append(field.element, remove);
    items.push(entry);
    list.append(entry.el);
  };
  if (Array.isArray(schema.default)) for (const v of schema.default as unknown[]) add(v);
  const addButton = h('button', { type: 'button', class: 'small' }, `+ Add ${typeLabel(unwrapNullable(itemSchema).schema)}`);
  addButton.addEventListener('click', () => add());
  return {
    element: h('div', { class: 'array-field' }, list, addButton),
    read(): Read {
      const values = items.map((i) => i.field.read()).filter((r): r is { set: true; value: unknown } => r.set).map((r) => r.value);
      return values.length || required || schema.default !== undefined ? { set: true, value: values } : { set: false };
    },
  };
}

/**
 * An object's properties as rows (a fieldset when nested). When the schema allows properties
 * beyond the listed ones (e.g. `submit`, whose Task inputs sit beside `task`), a JSON box takes them.
 */
function objectField(schema: JsonSchema, required: boolean, depth: number): { field: Field; rows: HTMLElement[] } {
  const requiredNames = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const field = buildField(prop, name, requiredNames.has(name), depth);
    return { name, field, row: row(name, prop, requiredNames.has(name), field) };
  });
  const open = schema.additionalProperties === true || typeof schema.additionalProperties === 'object';
  const extra = open && depth === 0 ? jsonField(fieldId(), { type: 'object' }, 'Additional fields') : null;
  const rows = fields.map((f) => f.row);
  if (extra) rows.push(row('additional fields', { type: 'object', description: 'Further fields as a JSON object, merged into the arguments.' }, false, extra));
  const read = (): Read => {
    const value: Record<string, unknown> = {};
    for (const f of fields) {
      const r = f.field.read();
      if (r.set) value[f.name] = r.value;
    }
    const more = extra?.read();
    if (more?.set) {
      if (typeof more.value !== 'object' || more.value === null || Array.isArray(more.value)) throw new FormError('Additional fields: must be a JSON object');
      Object.assign(value, more.value);
    }
    return Object.keys(value).length || required ? { set: true, value } : { set: false };
  };
  return { field: { element: h('fieldset', { class: 'nested' }, rows), read }, rows };
}

/** A form body for a Job's or Task's input schema; `read` gives the arguments object. */
export interface SchemaForm {
  readonly rows: HTMLElement[];
  read(): Record<string, unknown>;
}

/** Builds the rows of a form for `schema` (an object schema; anything else becomes one JSON box). */
export function buildSchemaForm(schema: JsonSchema, opts: { omit?: readonly string[] } = {}): SchemaForm {
  const omit = new Set(opts.omit ?? []);
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !omit.has(k)));
  const trimmed: JsonSchema = { ...schema, type: 'object', properties };
  const { field, rows } = objectField(trimmed, true, 0);
  return {
    rows,
    read: () => {
      const r = field.read();
      return r.set ? (r.value as Record<string, unknown>) : {};
    },
  };
}
