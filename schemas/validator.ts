import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, addFormats, type ErrorObject, type ValidateFunction } from '../vendor/ajv.js';
import { PRECOMPILED } from './precompiled.js';

/** One validation problem, in the shape FastAPI-style clients expect from a 422. */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

/**
 * Schemas built with TypeBox carry its `Kind` symbol (a registered symbol, the same in every copy
 * of the library). They come from this code's own typed builders, so checking them against the
 * JSON Schema meta-schema proves nothing; only plain schemas (Task definitions, plugins, the wire)
 * are checked, which keeps compiling the meta-schema (~40 ms) off a service's start.
 */
const TYPEBOX_KIND = Symbol.for('TypeBox.Kind');

/** The options of both instances; schemas/precompile.mjs generates its validators with the same. */
export const ajvOptions = (useDefaults: boolean) => ({ allErrors: true, strict: false, useDefaults, coerceTypes: false, validateSchema: false }) as const;

function makeAjv(useDefaults: boolean): Ajv {
  const ajv = new Ajv(ajvOptions(useDefaults));
  addFormats(ajv);
  return ajv;
}

// Two instances share nothing but configuration: one checks, one checks and fills defaults. Each
// compiles a schema the first time it is asked to use it: most schemas are only ever used one way.
const checker = makeAjv(false);
const filler = makeAjv(true);
const compiled = new WeakMap<object, { check?: ValidateFunction; fill?: ValidateFunction }>();
/** Validators the build generated (schemas/precompiled.ts), by kind and schema text: looked up once per schema object. */
const generated = new Map(PRECOMPILED.map((p) => [`${p.defaults}${p.schema}`, p.validate]));

/**
 * What `check` takes: a TypeBox schema, whose static type the checked value gets, or plain JSON
 * Schema (Task definitions, plugins, schemas read from the wire), whose value stays `unknown`.
 */
export type AnySchema = TSchema | Readonly<Record<string, unknown>>;
/** The static type a schema gives a checked value. */
export type StaticOf<S> = S extends TSchema ? Static<S> : unknown;

/** The schema's validator of one kind, compiled on first use (a plain schema is checked against the meta-schema first, once). */
function compile(schema: AnySchema, defaults: boolean): ValidateFunction {
  let entry = compiled.get(schema);
  if (!entry) {
    entry = {};
    // No generated validators (a build by tsc alone): no schema is serialized to look for one.
    const text = generated.size > 0 ? JSON.stringify(schema) : '';
    const check = generated.get(`false${text}`);
    const fill = generated.get(`true${text}`);
    // Throws `schema is invalid: …`, as ajv's own check did, before anything is compiled; a
    // schema the build generated a validator for was checked then (by compiling it).
    if (!(TYPEBOX_KIND in schema) && !check && !fill) checker.validateSchema(schema, true);
    if (check) entry.check = check;
    if (fill) entry.fill = fill;
    compiled.set(schema, entry);
  }
  return defaults ? (entry.fill ??= filler.compile(schema)) : (entry.check ??= checker.compile(schema));
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
  if (opts.defaults) {
    const fill = compile(schema, true);
    const copy = value === undefined || opts.inPlace ? value : structuredClone(value);
    return fill(copy) ? { ok: true, value: copy as StaticOf<S> } : { ok: false, issues: toIssues(fill.errors) };
  }
  const plain = compile(schema, false);
  return plain(value) ? { ok: true, value: value as StaticOf<S> } : { ok: false, issues: toIssues(plain.errors) };
}

/** Renders issues as one readable line, e.g. for business failures and CLI messages. */
export function describeIssues(issues: ValidationIssue[]): string {
  return issues.map((i) => (i.loc.length ? `${i.loc.join('.')}: ${i.msg}` : i.msg)).join('; ');
}
