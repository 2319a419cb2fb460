import { h } from './dom.js';

/** Beyond this many characters highlighting costs more than it helps: show plain text. */
const HIGHLIGHT_LIMIT = 400_000;

const JSON_TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false)\b|\b(null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Appends `text` to `out`, wrapping matches of `pattern` in spans classed by `classify`. */
function tokenize(out: Node, text: string, pattern: RegExp, classify: (m: RegExpExecArray) => Array<[string, string | null]>): void {
  let last = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    if (m.index > last) out.appendChild(document.createTextNode(text.slice(last, m.index)));
    for (const [part, cls] of classify(m)) out.appendChild(cls ? h('span', { class: cls }, part) : document.createTextNode(part));
    last = m.index + m[0].length;
    if (m[0].length === 0) pattern.lastIndex++;
  }
  if (last < text.length) out.appendChild(document.createTextNode(text.slice(last)));
}

function codeBlock(lang: string): HTMLElement {
  return h('pre', { class: `code code-${lang}`, tabindex: 0 });
}

/** JSON text (pretty-printed by the caller) with keys, strings, numbers and literals coloured. */
export function highlightJsonText(text: string): HTMLElement {
  const pre = codeBlock('json');
  if (text.length > HIGHLIGHT_LIMIT) {
    pre.textContent = text;
    return pre;
  }
  tokenize(pre, text, JSON_TOKEN, (m) => {
    if (m[1] !== undefined) return m[2] !== undefined ? [[m[1], 'tok-key'], [m[2], null]] : [[m[1], 'tok-string']];
    if (m[3] !== undefined) return [[m[3], 'tok-bool']];
    if (m[4] !== undefined) return [[m[4], 'tok-null']];
    return [[m[0], 'tok-number']];
  });
  return pre;
}

/** Any JSON value, pretty-printed and highlighted. */
export function jsonView(value: unknown): HTMLElement {
  return highlightJsonText(JSON.stringify(value, null, 2) ?? 'undefined');
}

const YAML_LINE = /^(\s*(?:-\s+)?)(#.*|[^#:\s][^:#]*?)(:)(?=\s|$)|(\s#.*$)|("(?:\\.|[^"\\])*"|'(?:''|[^'])*')|\b(true|false|yes|no|null|~)\b|(-?\d+(?:\.\d+)?)\b|^(\s*#.*)$/gm;

/** YAML text with keys, comments, strings, numbers and literals coloured (line-based, tolerant). */
export function highlightYaml(text: string): HTMLElement {
  const pre = codeBlock('yaml');
  if (text.length > HIGHLIGHT_LIMIT) {
    pre.textContent = text;
    return pre;
  }
  tokenize(pre, text, YAML_LINE, (m) => {
    if (m[8] !== undefined) return [[m[8], 'tok-comment']];
    if (m[3] !== undefined) return [[m[1] ?? '', null], [m[2] ?? '', m[2]?.startsWith('#') ? 'tok-comment' : 'tok-key'], [m[3], null]];
    if (m[4] !== undefined) return [[m[4], 'tok-comment']];
    if (m[5] !== undefined) return [[m[5], 'tok-string']];
    if (m[6] !== undefined) return [[m[6], m[6] === 'null' || m[6] === '~' ? 'tok-null' : 'tok-bool']];
    return [[m[0], 'tok-number']];
  });
  return pre;
}
