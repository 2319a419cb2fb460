import { extname } from 'node:path';
import type { PreviewKind } from '../../schemas/workspace.js';

// Extensions of plain-text formats users open in a text viewer (logs, configs, source code).
const TEXT_EXTENSIONS = new Set([
  'txt', 'text', 'log', 'out', 'err', 'ini', 'cfg', 'conf', 'toml', 'env', 'properties', 'jsonl', 'ndjson',
  'xml', 'html', 'htm', 'css', 'svg', 'sql', 'sh', 'bash', 'zsh', 'py', 'ts', 'tsx', 'js', 'mjs', 'cjs', 'jsx',
  'go', 'rs', 'java', 'kt', 'c', 'h', 'cc', 'cpp', 'hpp', 'rb', 'php', 'r', 'jl', 'lua', 'pl', 'swift', 'scala',
  'tex', 'rst', 'adoc', 'diff', 'patch', 'gitignore', 'dockerignore', 'editorconfig',
]);
// Well-known extensionless text files.
const TEXT_NAMES = new Set(['readme', 'license', 'licence', 'makefile', 'dockerfile', 'changelog', 'notice', 'authors']);

const BY_EXTENSION: Readonly<Record<string, PreviewKind>> = Object.freeze({
  md: 'markdown', markdown: 'markdown', mdown: 'markdown',
  json: 'json', geojson: 'json',
  yaml: 'yaml', yml: 'yaml',
  csv: 'csv', tsv: 'csv',
  parquet: 'parquet', pq: 'parquet',
});

/** The preview kind of a file, decided by its name alone (spec: kind by extension). */
export function previewKindOf(name: string): PreviewKind {
  const ext = extname(name).slice(1).toLowerCase();
  const known = BY_EXTENSION[ext];
  if (known) return known;
  if (ext ? TEXT_EXTENSIONS.has(ext) : TEXT_NAMES.has(name.toLowerCase())) return 'text';
  // A dotfile such as `.gitignore` has no extname; its name is its type.
  if (!ext && name.startsWith('.') && TEXT_EXTENSIONS.has(name.slice(1).toLowerCase())) return 'text';
  return 'unsupported';
}

/** CSV delimiter by extension: tab-separated files preview like CSV. */
export function csvDelimiterOf(name: string): string {
  return extname(name).toLowerCase() === '.tsv' ? '\t' : ',';
}
