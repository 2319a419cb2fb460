import { UsageError } from './cli-errors.js';
import { acceptedTypes, arrayForm, jsonTypesOf, type SchemaNode } from './schema-node.js';

/**
 * String fields that hold a list joined by a separator (spec: `source_tasks` is Task IDs separated
 * by commas, not an array): repeating the flag joins the values, as repeating builds an array elsewhere.
 */
const LIST_STRINGS: Readonly<Record<string, string>> = { source_tasks: ',' };

/** Finds the schema property a `--flag` names: `--task-id` and `--task_id` both mean `task_id`. */
function propertyFor(flag: string, properties: Record<string, SchemaNode>): string | undefined {
  if (Object.hasOwn(properties, flag)) return flag;
  const snake = flag.replace(/-/g, '_');
  return Object.hasOwn(properties, snake) ? snake : undefined;
}

function isBooleanOnly(schema: SchemaNode): boolean {
  const types = acceptedTypes(schema);
  return types.size === 1 && types.has('boolean');
}

/**
 * Converts one flag value by the property's schema: strings stay as typed, other types are read
 * as JSON. Where a string is also accepted, text that is not JSON of another accepted type stays
 * a string (so `--name 007` keeps its zeros for a string field).
 */
export function convertValue(flag: string, raw: string, schema: SchemaNode): unknown {
  const types = acceptedTypes(schema);
  if (types.size === 1 && types.has('string')) return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    if (types.size === 0 || types.has('string')) return raw;
    throw new UsageError(`--${flag} expects ${[...types].join(' or ')}, got ${JSON.stringify(raw)}`);
  }
  if (types.size === 0 || jsonTypesOf(parsed).some((t) => types.has(t))) return parsed;
  if (types.has('string')) return raw;
  throw new UsageError(`--${flag} expects ${[...types].join(' or ')}, got ${JSON.stringify(raw)}`);
}

/**
 * Turns the Job's `--field value` tokens into its arguments using its input schema. Booleans may
 * stand alone (`--flag` = true, `--no-flag` = false); array fields collect repeated flags (a value
 * that is a JSON array adds all its items).
 */
export function parseFields(tokens: readonly string[], schema: SchemaNode, base: Record<string, unknown> = {}): Record<string, unknown> {
  const properties = schema.properties ?? {};
  const args: Record<string, unknown> = { ...base };
  const seen = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(token);
    if (!match) throw new UsageError(`unexpected argument ${JSON.stringify(token)}: parameters are given as --name value`);
    const flag = match[1]!;
    let inline = match[2];
    let key = propertyFor(flag, properties);
    if (key === undefined && flag.startsWith('no-') && inline === undefined) {
      key = propertyFor(flag.slice(3), properties);
      if (key === undefined || !isBooleanOnly(properties[key]!)) throw new UsageError(`unknown parameter --${flag}`);
      inline = 'false';
    }
    if (key === undefined) {
      // Schemas that declare extra fields (submit: the Task's own inputs) accept any flag; its
      // value is read as JSON when it parses, and a flag with no value is `true`.
      if (schema.additionalProperties === undefined || schema.additionalProperties === false) throw new UsageError(`unknown parameter --${flag}`);
      key = flag.replace(/-/g, '_');
    }
    const property = properties[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {});
    let raw = inline;
    const bare = raw === undefined && (tokens[i + 1] === undefined || tokens[i + 1]!.startsWith('--'));
    if (raw === undefined && (isBooleanOnly(property) || (bare && !properties[key]))) {
      raw = tokens[i + 1] === 'true' || tokens[i + 1] === 'false' ? tokens[++i]! : 'true';
    }
    raw ??= tokens[++i];
    if (raw === undefined) throw new UsageError(`--${flag} needs a value`);

    const array = arrayForm(property);
    if (Object.hasOwn(LIST_STRINGS, key) && seen.has(key)) {
      args[key] = `${String(args[key])}${LIST_STRINGS[key]}${raw}`;
    } else if (array || (seen.has(key) && !properties[key])) {
      // An undeclared extra field (a Task input not described here) also collects repeats.
      if (!array && !Array.isArray(args[key])) args[key] = [args[key]];
      const previous = seen.has(key) && Array.isArray(args[key]) ? (args[key] as unknown[]) : [];
      const asJson = raw.trimStart().startsWith('[') ? convertValue(flag, raw, property) : undefined;
      args[key] = Array.isArray(asJson) ? [...previous, ...asJson] : [...previous, convertValue(flag, raw, array?.items ?? {})];
    } else {
      if (seen.has(key)) throw new UsageError(`--${flag} is given more than once`);
      args[key] = convertValue(flag, raw, property);
    }
    seen.add(key);
  }
  return args;
}

/** Parses `--json '<object>'`: the raw arguments that `--field` flags then add to or override. */
export function parseJsonArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--json is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('--json must be a JSON object of arguments');
  return value as Record<string, unknown>;
}

/** The flag of a property, as help shows it. */
export function flagOf(property: string): string {
  return `--${property.replace(/_/g, '-')}`;
}

/** Refuses arguments that lack a required property without default, naming its flag, before any call. */
export function checkRequired(args: Record<string, unknown>, schema: SchemaNode): void {
  const properties = schema.properties ?? {};
  const missing = (schema.required ?? []).filter((name) => args[name] === undefined && properties[name]?.default === undefined);
  if (missing.length === 0) return;
  throw new UsageError(`missing required ${missing.map(flagOf).join(', ')}`);
}
