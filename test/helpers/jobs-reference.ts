/**
 * docs/reference/jobs.md lists every Job of the catalog with its parameters. The list is written
 * from `GET /jobs` (between the markers below), so the page and the service cannot drift: the doc
 * test renders it from a live service and compares.
 */
export const CATALOG_START = '<!-- catalog: written by test/docs/jobs-reference.test.ts from GET /jobs; do not edit by hand -->';
export const CATALOG_END = '<!-- end of catalog -->';

export interface CatalogJob {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A parameter's type as a reader writes it: `string`, `integer[]`, `string | null`, `"a" | "b"`. */
/** `integer[]`, or `("a" \| "b")[]` for a list of a union. */
const listOf = (item: string): string => (item.includes('|') ? `(${item})[]` : `${item}[]`);

function typeOf(schema: Schema): string {
  if (Array.isArray(schema['enum'])) return schema['enum'].map((v) => JSON.stringify(v)).join(' \\| ');
  if (Array.isArray(schema['anyOf'])) return schema['anyOf'].filter(isSchema).map(typeOf).join(' \\| ');
  if (schema['type'] === 'array' && isSchema(schema['items'])) return listOf(typeOf(schema['items']));
  if (Array.isArray(schema['type'])) return schema['type'].join(' \\| ');
  return typeof schema['type'] === 'string' ? schema['type'] : 'any';
}

/** The bounds a value is checked against, in words. */
function boundsOf(schema: Schema): string[] {
  const words: Array<[string, string]> = [
    ['minimum', '≥'], ['exclusiveMinimum', '>'], ['maximum', '≤'], ['exclusiveMaximum', '<'],
    ['minLength', 'length ≥'], ['maxLength', 'length ≤'], ['minItems', 'items ≥'], ['maxItems', 'items ≤'],
  ];
  return words.filter(([key]) => typeof schema[key] === 'number').map(([key, word]) => `${word} ${String(schema[key])}`);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

function parameters(input: Schema): string[] {
  const properties = isSchema(input['properties']) ? input['properties'] : {};
  const required = new Set(Array.isArray(input['required']) ? input['required'] : []);
  const rows = Object.entries(properties).filter((e): e is [string, Schema] => isSchema(e[1])).map(([name, schema]) => {
    const notes = [typeof schema['description'] === 'string' ? schema['description'] : '', ...boundsOf(schema)].filter(Boolean).join('; ');
    const fallback = 'default' in schema ? `\`${JSON.stringify(schema['default'])}\`` : '';
    return `| \`${name}\` | ${typeOf(schema)} | ${required.has(name) ? 'yes' : ''} | ${fallback} | ${cell(notes)} |`;
  });
  const open = input['additionalProperties'] === true ? ['', 'Other arguments are accepted (for `submit`: the Task\'s own inputs).'] : [];
  if (rows.length === 0) return ['No parameters.', ...open];
  return ['| parameter | type | required | default | notes |', '|---|---|---|---|---|', ...rows, ...open];
}

/** The generated part of docs/reference/jobs.md, markers included. */
export function renderCatalog(jobs: CatalogJob[]): string {
  const parts = [CATALOG_START, ''];
  for (const job of jobs) parts.push(`### \`${job.name}\``, '', job.description.trim(), '', ...parameters(job.input_schema), '');
  parts.push(CATALOG_END);
  return parts.join('\n');
}

/** The page with its generated part replaced by `catalog`. */
export function withCatalog(page: string, catalog: string): string {
  const start = page.indexOf(CATALOG_START);
  const end = page.indexOf(CATALOG_END);
  if (start < 0 || end < start) throw new Error('docs/reference/jobs.md lost its catalog markers');
  return page.slice(0, start) + catalog + page.slice(end + CATALOG_END.length);
}
