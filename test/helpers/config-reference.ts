/**
 * docs/reference/configuration.md lists every key of the configuration file with its type and
 * default, written from the schema the service validates its file with (schemas/config.ts), so the
 * page and the schema cannot drift: the doc test renders the table and compares.
 */
export const KEYS_START = '<!-- keys: written by test/docs/config-reference.test.ts from schemas/config.ts; do not edit by hand -->';
export const KEYS_END = '<!-- end of keys -->';

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schemas a value may match: the variants of a union, or the schema itself. */
function variants(schema: Schema): Schema[] {
  return Array.isArray(schema['anyOf']) ? schema['anyOf'].filter(isSchema) : [schema];
}

/** `integer[]`, or `("a" \| "b")[]` for a list of a union. */
const listOf = (item: string): string => (item.includes('|') ? `(${item})[]` : `${item}[]`);

function typeOf(schema: Schema): string {
  if ('const' in schema) return JSON.stringify(schema['const']);
  if (Array.isArray(schema['anyOf'])) return variants(schema).map(typeOf).join(' \\| ');
  if (schema['type'] === 'array') return isSchema(schema['items']) && schema['items']['type'] !== 'object' ? listOf(typeOf(schema['items'])) : 'list';
  if (schema['type'] === 'object') return isSchema(schema['patternProperties']) ? 'map' : 'object';
  return typeof schema['type'] === 'string' ? schema['type'] : 'any';
}

function boundsOf(schema: Schema): string {
  const words: Array<[string, string]> = [
    ['minimum', '≥'], ['exclusiveMinimum', '>'], ['maximum', '≤'], ['minLength', 'length ≥'], ['minItems', 'items ≥'], ['maxItems', 'items ≤'],
  ];
  return words.filter(([key]) => typeof schema[key] === 'number').map(([key, word]) => `${word} ${String(schema[key])}`).join(', ');
}

function rows(schema: Schema, path: string, required: boolean, out: string[]): void {
  const fallback = 'default' in schema ? `\`${JSON.stringify(schema['default'])}\`` : required ? 'required' : '';
  const inner = variants(schema).find((v) => v['type'] === 'object' || v['type'] === 'array');
  const leaf = inner === undefined || (inner['type'] === 'array' && !(isSchema(inner['items']) && inner['items']['type'] === 'object'));
  if (path !== '') out.push(`| \`${path}\` | ${typeOf(schema)} | ${fallback} | ${boundsOf(inner ?? schema) || boundsOf(variants(schema)[0] ?? schema)} |`);
  if (leaf || inner === undefined) return;
  if (inner['type'] === 'array') return rows(inner['items'] as Schema, `${path}[]`, false, out);
  if (isSchema(inner['patternProperties'])) {
    const [value] = Object.values(inner['patternProperties']).filter(isSchema);
    if (value !== undefined) rows(value, `${path}.<name>`, false, out);
    return;
  }
  const requiredKeys = new Set(Array.isArray(inner['required']) ? inner['required'] : []);
  for (const [key, value] of Object.entries(isSchema(inner['properties']) ? inner['properties'] : {})) {
    if (isSchema(value)) rows(value, path === '' ? key : `${path}.${key}`, requiredKeys.has(key), out);
  }
}

/** The generated table, markers included. */
export function renderKeys(config: Schema): string {
  const out: string[] = [];
  rows(config, '', true, out);
  return [KEYS_START, '', '| key | type | default | bounds |', '|---|---|---|---|', ...out, '', KEYS_END].join('\n');
}

/** The page with its generated table replaced. */
export function withKeys(page: string, keys: string): string {
  const start = page.indexOf(KEYS_START);
  const end = page.indexOf(KEYS_END);
  if (start < 0 || end < start) throw new Error('docs/reference/configuration.md lost its key-table markers');
  return page.slice(0, start) + keys + page.slice(end + KEYS_END.length);
}
