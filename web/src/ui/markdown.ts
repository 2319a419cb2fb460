import { Marked } from 'marked';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/**
 * Raw HTML inside a Markdown file is shown as text, never parsed: even inert parsing makes the
 * browser look at `on*` attributes (and report them to the CSP), and a file is untrusted input.
 */
const marked = new Marked({ gfm: true, renderer: { html: ({ text }) => escapeHtml(text) } });

/** Tags and attributes Markdown can legitimately produce; everything else is dropped. */
const ALLOWED_TAGS = new Set([
  'A', 'P', 'BR', 'HR', 'EM', 'STRONG', 'DEL', 'S', 'CODE', 'PRE', 'BLOCKQUOTE', 'UL', 'OL', 'LI',
  'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'IMG', 'INPUT',
  'SPAN', 'DIV', 'SUP', 'SUB', 'KBD', 'DETAILS', 'SUMMARY',
]);
const ALLOWED_ATTRS = new Set(['href', 'title', 'alt', 'src', 'align', 'colspan', 'rowspan', 'type', 'checked', 'disabled', 'start']);
const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/)|\.{0,2}\/|[^:]*$)/i;

function clean(node: Element): void {
  for (const child of [...node.children]) {
    if (!ALLOWED_TAGS.has(child.tagName)) {
      child.remove();
      continue;
    }
    for (const attr of [...child.attributes]) {
      const keep = ALLOWED_ATTRS.has(attr.name) && (!['href', 'src'].includes(attr.name) || SAFE_URL.test(attr.value.trim()));
      if (!keep) child.removeAttribute(attr.name);
    }
    if (child.tagName === 'A') {
      child.setAttribute('rel', 'noopener noreferrer');
      child.setAttribute('target', '_blank');
    }
    if (child.tagName === 'INPUT' && child.getAttribute('type') !== 'checkbox') child.remove();
    else clean(child);
  }
}

/**
 * Markdown from a workspace file rendered to a sanitised fragment. Files are untrusted: raw HTML
 * is escaped, what Markdown itself produced is cut down to an allowlist of tags, attributes and
 * URL schemes, and the page's content security policy blocks scripts on top of that.
 */
export function renderMarkdown(source: string): DocumentFragment {
  const html = marked.parse(source, { async: false });
  const template = document.createElement('template');
  template.innerHTML = html;
  clean(template.content as unknown as Element);
  return template.content;
}
