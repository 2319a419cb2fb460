import type { Preview } from '../api/types.js';
import { dataTable } from './data-table.js';
import { h, notice } from './dom.js';
import { formatBytes } from './format.js';
import { highlightJsonText, highlightYaml, jsonView } from './highlight.js';
import { renderMarkdown } from './markdown.js';

function truncatedNote(truncated: boolean): HTMLElement | null {
  return truncated ? notice('Only the first 512 KiB are shown.', 'info') : null;
}

/** Pretty JSON when the text parses, else the text as it is. */
function jsonText(content: string, data: unknown, parsed: boolean): HTMLElement {
  return parsed ? jsonView(data) : highlightJsonText(content);
}

/**
 * A `preview_file` answer drawn by kind: tables with paging for CSV and Parquet, rendered
 * Markdown with its frontmatter, highlighted JSON and YAML, plain text.
 */
export function previewView(p: Preview, pageSize: number, go: (offset: number) => void): HTMLElement {
  switch (p.kind) {
    case 'csv':
      return dataTable(p, pageSize, go);
    case 'parquet':
      return h(
        'div',
        {},
        h('p', { class: 'muted' }, `${p.row_count.toLocaleString()} rows in ${p.row_group_count} row groups · `, schemaSummary(p.column_schema)),
        dataTable(p, pageSize, go),
      );
    case 'markdown': {
      const front = p.frontmatter_error
        ? notice(`Frontmatter: ${p.frontmatter_error}`, 'error')
        : p.frontmatter && Object.keys(p.frontmatter as object).length
          ? h('details', { class: 'frontmatter', open: true }, h('summary', {}, 'frontmatter'), jsonView(p.frontmatter))
          : null;
      return h('div', {}, front, h('article', { class: 'markdown' }, renderMarkdown(p.content)), truncatedNote(p.truncated));
    }
    case 'json':
    case 'yaml':
      return h(
        'div',
        {},
        p.parse_error ? notice(`Parse error: ${p.parse_error}`, 'error') : null,
        p.kind === 'json' ? jsonText(p.content, p.data, p.parse_error === null && !p.truncated) : highlightYaml(p.content),
        truncatedNote(p.truncated),
      );
    case 'text':
      return h('div', {}, h('pre', { class: 'code text', tabindex: 0 }, p.content), truncatedNote(p.truncated));
    default:
      return notice(`No preview for this kind of file (${formatBytes(p.size)}).`, 'empty');
  }
}

function schemaSummary(schema: unknown): HTMLElement {
  const cols = Array.isArray(schema) ? (schema as Array<{ name: string; type: string; nullable: boolean }>) : [];
  return h('span', { class: 'schema' }, cols.map((c) => h('code', { title: c.nullable ? 'nullable' : 'not null' }, `${c.name}: ${c.type}${c.nullable ? '?' : ''}`)));
}
