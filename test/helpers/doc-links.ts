import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The Markdown files whose links are checked: README.md and every page under docs/. */
export function markdownFiles(root: string): string[] {
  const out = [join(root, 'README.md')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.md')) out.push(full);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** Text outside fenced code blocks and inline code spans: links there are examples, not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * The anchors GitHub gives a page's headings: lower case, inline markup and punctuation dropped
 * (letters, digits, spaces, `-` and `_` stay), spaces become `-`, repeats get `-1`, `-2`, …
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/**
 * Every relative link of `file` (`[text](target)`, images too) that does not resolve: a missing
 * file or folder, or an `#anchor` that no heading of the target page makes. Web and mail links are
 * not followed.
 */
export function brokenLinks(root: string, file: string): string[] {
  const broken: string[] = [];
  const here = relative(root, file);
  for (const [, target] of prose(readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: +"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
    const [path, anchor] = target!.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!resolved.startsWith(root) || !existsSync(resolved)) {
      broken.push(`${here}: ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${here}: ${target} (no heading makes #${anchor})`);
    }
  }
  return broken;
}
