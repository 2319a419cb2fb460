import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';

// ajv-formats ships CommonJS: under NodeNext the import is its module object, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

/** One validation problem, in the shape FastAPI-style clients expect from a 422. */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

function makeAjv(useDefaults: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults, coerceTypes: false });
  addFormats(ajv);
  return ajv;
}

// Two instances share nothing but configuration: one checks, one checks and fills defaults.
const checker = makeAjv(false);
const filler = makeAjv(true);
const compiled = new WeakMap<object, { check: ValidateFunction; fill: ValidateFunction }>();

/**
 * What `check` takes: a TypeBox schema, whose static type the checked value gets, or plain JSON
 * Schema (Task definitions, plugins, schemas read from the wire), whose value stays `unknown`.
 */
export type AnySchema = TSchema | Readonly<Record<string, unknown>>;
/** The static type a schema gives a checked value. */
export type StaticOf<S> = S extends TSchema ? Static<S> : unknown;

function compile(schema: AnySchema): { check: ValidateFunction; fill: ValidateFunction } {
  let entry = compiled.get(schema);
  if (!entry) {
    entry = { check: checker.compile(schema), fill: filler.compile(schema) };
    compiled.set(schema, entry);
  }
  return entry;
}

function toIssues(errors: ErrorObject[] | null | undefined): ValidationIssue[] {
  return (errors ?? []).map((e) => {
    const loc = e.instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required' && typeof params['missingProperty'] === 'string') loc.push(params['missingProperty']);
    if (e.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
      loc.push(params['additionalProperty']);
      return { loc, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    }
    return { loc, msg: e.message ?? 'is invalid', type: e.keyword };
  });
}

export type Checked<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/**
 * Validates `value` against `schema`. With `defaults`, missing fields are filled from the schema
 * in a deep copy, so callers' objects are never mutated; `inPlace` skips the copy for values the
 * caller owns outright (a body it just parsed), which is the hot path of every request.
 */
export function check<S extends AnySchema>(schema: S, value: unknown, opts: { defaults?: boolean; inPlace?: boolean } = {}): Checked<StaticOf<S>> {
  const { check: plain, fill } = compile(schema);
  if (opts.defaults) {
    const copy = value === undefined || opts.inPlace ? value : structuredClone(value);
    return fill(copy) ? { ok: true, value: copy as StaticOf<S> } : { ok: false, issues: toIssues(fill.errors) };
  }
  return plain(value) ? { ok: true, value: value as StaticOf<S> } : { ok: false, issues: toIssues(plain.errors) };
}

/** Renders issues as one readable line, e.g. for business failures and CLI messages. */
export function describeIssues(issues: ValidationIssue[]): string {
  return issues.map((i) => (i.loc.length ? `${i.loc.join('.')}: ${i.msg}` : i.msg)).join('; ');
}
