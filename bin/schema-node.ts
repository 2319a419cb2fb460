import type { JsonSchema } from '../schemas/json-schema.js';

/** The parts of a Job's JSON Schema (from `GET /jobs`) that the CLI reads. */
export type SchemaNode = JsonSchema;

/** JSON type names of a value, as JSON Schema names them (an integer is also a number). */
export function jsonTypesOf(value: unknown): string[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return [typeof value];
}

/** Every JSON type the schema accepts; empty when it accepts anything. */
export function acceptedTypes(schema: SchemaNode): Set<string> {
  const types = new Set<string>();
  if (typeof schema.type === 'string') types.add(schema.type);
  else if (Array.isArray(schema.type)) schema.type.forEach((t) => types.add(t));
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) acceptedTypes(member).forEach((t) => types.add(t));
  for (const value of schema.enum ?? (schema.const !== undefined ? [schema.const] : [])) jsonTypesOf(value).forEach((t) => types.add(t));
  if (types.has('integer')) types.add('number');
  return types;
}

/** The array form of a schema (itself or a union member), whose `items` describe repeated flags. */
export function arrayForm(schema: SchemaNode): SchemaNode | undefined {
  if (schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array'))) return schema;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map(arrayForm).find((s) => s !== undefined);
}

/** A short type label for help and messages, e.g. `integer`, `string|null`, `array of string`. */
export function typeLabel(schema: SchemaNode): string {
  const array = arrayForm(schema);
  if (array && acceptedTypes(schema).size === 1) return `array of ${array.items ? typeLabel(array.items) : 'any'}`;
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join('|');
  const types = [...acceptedTypes(schema)].filter((t, _, all) => !(t === 'number' && all.includes('integer')));
  return types.length > 0 ? types.join('|') : 'any';
}
