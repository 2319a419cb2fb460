import type { JsonSchema } from '../api/types.js';
import { h } from './dom.js';

/** A value read from a form control: absent when the user left an optional field empty. */
export type Read = { set: false } | { set: true; value: unknown };

/** One form control built from a schema; `read` throws a FormError on unparsable input. */
export interface Field {
  readonly element: HTMLElement;
  read(): Read;
}

export class FormError extends Error {}

let nextId = 0;
/** A unique element id, so every label points at its control. */
export function fieldId(): string {
  return `f${++nextId}`;
}

const UNSET: Read = { set: false };

/** `anyOf: [X, {type:'null'}]` → X with `nullable`; anything else unchanged. */
export function unwrapNullable(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const rest = variants.filter((v) => v.type !== 'null');
    if (rest.length === 1 && rest.length < variants.length) return { schema: { ...rest[0], ...pick(schema) }, nullable: true };
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const others = schema.type.filter((t) => t !== 'null');
    if (others.length === 1) return { schema: { ...schema, type: others[0]! }, nullable: true };
  }
  return { schema, nullable: false };
}

function pick(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  if (schema.default !== undefined) out.default = schema.default;
  if (schema.description !== undefined) out.description = schema.description;
  if (schema.title !== undefined) out.title = schema.title;
  return out;
}

/** The allowed values of an enum (`enum`, or TypeBox's union of literals), else null. */
export function enumValues(schema: JsonSchema): unknown[] | null {
  if (schema.enum) return schema.enum;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants?.length && variants.every((v) => v.const !== undefined)) return variants.map((v) => v.const);
  if (schema.const !== undefined) return [schema.const];
  return null;
}

/** A drop-down of the allowed values; an optional one without default can stay unset. */
export function selectField(id: string, values: unknown[], schema: JsonSchema, required: boolean): Field {
  const select = h('select', { id });
  if (!required && schema.default === undefined) select.append(h('option', { value: '' }, '(not set)'));
  values.forEach((v, i) => select.append(h('option', { value: String(i), selected: v === schema.default }, String(v))));
  return { element: select, read: () => (select.value === '' ? UNSET : { set: true, value: values[Number(select.value)] }) };
}

/** Text, integer or number input with the schema's bounds as native constraints. */
export function inputField(id: string, schema: JsonSchema, required: boolean, nullable: boolean): Field {
  const numeric = schema.type === 'integer' || schema.type === 'number';
  const input = h('input', {
    id,
    type: numeric ? 'number' : 'text',
    step: schema.type === 'integer' ? 1 : numeric ? 'any' : undefined,
    min: schema.minimum,
    max: schema.maximum,
    minlength: schema.minLength,
    maxlength: schema.maxLength,
    // Not the `pattern` attribute: browsers anchor it and compile it with the `v` flag, so valid
    // JSON Schema patterns can reject good input there. The service validates; the hint helps.
    title: schema.pattern ? `pattern: ${schema.pattern}` : undefined,
    required,
    // No `null` hint for nullable fields: it read as a value to type in.
    placeholder: schema.format,
    value: schema.default === undefined || schema.default === null ? undefined : String(schema.default),
    autocomplete: 'off',
    spellcheck: false,
  });
  return {
    element: input,
    read(): Read {
      const raw = input.value;
      if (raw === '') return required && !numeric ? { set: true, value: '' } : UNSET;
      if (!numeric) return { set: true, value: raw };
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new FormError(`${id}: not a number`);
      return { set: true, value: n };
    },
  };
}

/** A checkbox; an optional boolean without default is sent only when ticked. */
export function checkboxField(id: string, schema: JsonSchema, required: boolean): Field {
  const input = h('input', { id, type: 'checkbox', checked: schema.default === true });
  const always = required || schema.default !== undefined;
  return { element: input, read: () => (input.checked || always ? { set: true, value: input.checked } : UNSET) };
}

/** Free JSON for anything the form cannot model (records, unions, `unknown`). */
export function jsonField(id: string, schema: JsonSchema, label: string): Field {
  const area = h('textarea', { id, rows: 3, spellcheck: false, class: 'mono', placeholder: 'JSON value' });
  if (schema.default !== undefined) area.value = JSON.stringify(schema.default);
  return {
    element: area,
    read(): Read {
      if (!area.value.trim()) return UNSET;
      try {
        return { set: true, value: JSON.parse(area.value) as unknown };
      } catch {
        throw new FormError(`${label}: not valid JSON`);
      }
    },
  };
}
