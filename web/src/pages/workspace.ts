import { errorText, type Api } from '../api/client.js';
import type { CsvRowCount, Preview, WorkspaceEntry, WorkspaceListing } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { href, navigate } from '../app/router.js';
import { h, notice, replaceChildren } from '../ui/dom.js';
import { downloadButton, imageView, isImage } from '../ui/file-download.js';
import { formatBytes, timeLabel } from '../ui/format.js';
import { previewView } from '../ui/preview-view.js';
import { acceptDrops } from './workspace-upload.js';

const PAGE_SIZE = 100;

function parentOf(path: string): string {
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
}

function crumbs(path: string): HTMLElement {
  const parts = path ? path.split('/') : [];
  return h(
    'nav',
    { class: 'crumbs', 'aria-label': 'Folder' },
    h('a', { href: href(['workspace']) }, 'workspace'),
    parts.map((p, i) => [' / ', h('a', { href: href(['workspace'], { path: parts.slice(0, i + 1).join('/') }) }, p)]),
  );
}

/** What the preview column says of an entry: its preview kind; an image is shown (through downloads), not "unsupported". */
function previewTag(e: WorkspaceEntry): HTMLElement {
  if (e.kind === 'file' && isImage(e.path)) return h('span', { class: 'kind-tag' }, 'image');
  return e.preview_kind ? h('span', { class: `kind-tag${e.supported ? '' : ' muted'}` }, e.preview_kind) : h('span', { class: 'muted' }, e.kind);
}

function entryRow(e: WorkspaceEntry, selected: string | null, api: Api, onError: (text: string) => void): HTMLElement {
  const dir = e.kind === 'directory';
  const link = dir ? href(['workspace'], { path: e.path }) : href(['workspace'], { path: parentOf(e.path), file: e.path });
  return h(
    'tr',
    { class: e.path === selected ? 'selected' : undefined },
    h('td', {}, h('a', { href: link, class: `entry entry-${e.kind}`, title: e.path }, h('span', { class: 'entry-icon', 'aria-hidden': 'true' }, dir ? '▸' : '·'), e.name, dir ? '/' : '')),
    h('td', {}, previewTag(e)),
    h('td', { class: 'num nowrap' }, dir ? '' : formatBytes(e.size)),
    h('td', { class: 'muted nowrap' }, timeLabel(e.modified_at)),
    h('td', { class: 'row-actions' }, e.kind === 'file' ? downloadButton(api, e.path, e.size, onError, true) : ''),
  );
}

/**
 * The workspace browser: one folder's entries (directories first, as the service sorts them)
 * and a preview of the chosen file. Folder, file and table offset live in the URL.
 */
export function renderWorkspace(container: HTMLElement, ctx: PageContext): void {
  const path = ctx.location.query.get('path') ?? '';
  const file = ctx.location.query.get('file');
  const listing = h('section', { class: 'card listing', 'aria-label': 'Folder contents' }, notice('Listing…'));
  const preview = h('section', { class: 'card preview', 'aria-label': 'Preview', hidden: !file });
  const list = () => listFolder(listing, path, file, ctx);
  const uploads = acceptDrops(listing, ctx.api, path, list, ctx.signal);
  container.replaceChildren(h('div', { class: 'page-head' }, h('h1', {}, 'Workspace'), crumbs(path)), uploads, h('div', { class: `ws-grid${file ? ' with-preview' : ''}` }, listing, preview));
  list();
  if (file) showPreview(preview, file, Number(ctx.location.query.get('offset') ?? 0) || 0, ctx);
}

/** Lists the folder into its card (again after uploads). */
function listFolder(listing: HTMLElement, path: string, file: string | null, ctx: PageContext): void {
  ctx.api
    .answer<WorkspaceListing>('list_entries', { path }, { signal: ctx.signal })
    .then((l) => {
      const up = path ? h('tr', {}, h('td', { colspan: 5 }, h('a', { href: href(['workspace'], { path: parentOf(path) }), class: 'entry' }, '↑ ..'))) : null;
      replaceChildren(
        listing,
        l.entries.length || up
          ? h('table', { class: 'grid entries' }, h('thead', {}, h('tr', {}, ['name', 'preview', 'size', 'modified', ''].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, up, l.entries.map((e) => entryRow(e, file, ctx.api, (text) => listing.prepend(notice(text, 'error'))))))
          : notice('This folder is empty.', 'empty'),
        l.truncated ? notice(`Only the first ${l.entries.length} entries are listed.`) : null,
      );
    })
    .catch((err: unknown) => listing.replaceChildren(notice(errorText(err), 'error')));
}

/**
 * "N rows" of a CSV file (count_csv_rows; "≥ N" when the count stopped at its bound), counted once
 * per opened file while the first page shows: paging does not count again.
 */
function countRows(slot: HTMLElement, file: string, ctx: PageContext): void {
  if (!ctx.api.may('count_csv_rows')) return;
  ctx.api
    .answer<CsvRowCount>('count_csv_rows', { path: file }, { signal: ctx.signal })
    .then((c) => {
      slot.textContent = `${c.exact ? '' : '≥ '}${c.rows.toLocaleString()} ${c.rows === 1 && c.exact ? 'row' : 'rows'}`;
      slot.title = c.exact ? '' : `Counted in the first ${formatBytes(c.scanned_bytes)} of ${formatBytes(c.size)}`;
    })
    .catch(() => slot.replaceChildren());
}

function showPreview(box: HTMLElement, file: string, offset: number, ctx: PageContext): void {
  const body = h('div', { class: 'preview-body' }, notice('Loading preview…'));
  const del = h('button', { type: 'button', class: 'small danger' }, 'Delete');
  del.addEventListener('click', () => {
    if (!confirm(`Delete ${file}?`)) return;
    ctx.api
      .answer('delete_entries', { paths: [file] })
      .then(() => navigate(href(['workspace'], { path: parentOf(file) })))
      .catch((err: unknown) => body.prepend(notice(errorText(err), 'error')));
  });
  const meta = h('span', { class: 'muted' });
  const rowCount = h('span', { class: 'muted row-count', 'aria-live': 'polite' });
  let counted = false;
  const download = h('span', { class: 'download-slot' });
  const onError = (text: string) => body.prepend(notice(text, 'error'));
  box.replaceChildren(h('header', { class: 'preview-head' }, h('h2', {}, h('code', {}, file.split('/').pop() ?? file)), meta, rowCount, download, del), body);

  const load = (at: number) => {
    body.setAttribute('aria-busy', 'true');
    ctx.api
      .answer<Preview>('preview_file', { path: file, offset: at, limit: PAGE_SIZE }, { signal: ctx.signal })
      .then((p) => {
        meta.textContent = `${isImage(file) ? 'image' : p.kind} · ${formatBytes(p.size)}`;
        if (p.kind === 'csv' && !counted) countRows(rowCount, file, ctx);
        counted = true;
        download.replaceChildren(downloadButton(ctx.api, file, p.size, onError));
        // Images come through the download route; their preview answer only gave the size.
        if (isImage(file)) return body.replaceChildren(imageView(ctx.api, file, p.size, ctx.signal));
        body.replaceChildren(previewView(p, PAGE_SIZE, (next) => {
          // Paging keeps its place in the URL without re-rendering the folder listing.
          history.replaceState(null, '', href(['workspace'], { path: parentOf(file), file, offset: next ? String(next) : null }));
          load(next);
        }));
      })
      .catch((err: unknown) => body.replaceChildren(notice(errorText(err), 'error')))
      .finally(() => body.removeAttribute('aria-busy'));
  };
  load(offset);
}
