import type { FileHandle } from 'node:fs/promises';
import { parse as parseYaml } from '../../vendor/yaml.js';
import type { MarkdownPreview } from '../../schemas/workspace.js';
import { readTextWindow } from './text.js';
import { SAFE_YAML } from './structured.js';

interface Frontmatter {
  body: string;
  frontmatter: Record<string, unknown> | null;
  frontmatter_error: string | null;
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m;

/**
 * Splits a YAML frontmatter block off a Markdown text. A block exists only when the file starts
 * with a `---` line; a block that never closes or is not a YAML mapping yields
 * `frontmatter_error` and leaves the text whole.
 */
export function splitFrontmatter(text: string): Frontmatter {
  const opening = OPENING.exec(text);
  if (!opening) return { body: text, frontmatter: null, frontmatter_error: null };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) return { body: text, frontmatter: null, frontmatter_error: 'frontmatter block is not closed by a --- line' };
  const body = rest.slice(closing.index + closing[0].length);
  try {
    const data: unknown = parseYaml(rest.slice(0, closing.index), SAFE_YAML) ?? {};
    if (typeof data !== 'object' || Array.isArray(data)) {
      return { body, frontmatter: null, frontmatter_error: 'frontmatter is not a YAML mapping' };
    }
    return { body, frontmatter: data as Record<string, unknown>, frontmatter_error: null };
  } catch (err) {
    return { body, frontmatter: null, frontmatter_error: (err as Error).message };
  }
}

/** Markdown preview: the body (up to 512 KiB of file) and its parsed frontmatter. */
export async function previewMarkdown(handle: FileHandle, size: number): Promise<MarkdownPreview> {
  const { content, truncated } = await readTextWindow(handle, size);
  const { body, frontmatter, frontmatter_error } = splitFrontmatter(content);
  return { kind: 'markdown', size, content: body, frontmatter, frontmatter_error, truncated };
}
