import { errorText, type Api } from '../api/client.js';
import type { MovedEntry } from '../api/types.js';
import { h, notice } from '../ui/dom.js';
import { formatBytes } from '../ui/format.js';
import { progressBar } from '../ui/progress-bar.js';

/**
 * Files dropped onto the workspace listing: each is staged with `POST /files` (a progress bar
 * per file), then moved into the folder shown with `move_entries` (an existing file of that name
 * is not replaced: the drop says so, and the staged copy stays in tmp/). `done` runs once all are
 * settled, to list the folder again.
 */
export function acceptDrops(zone: HTMLElement, api: Api, folder: string, done: () => void, signal: AbortSignal): HTMLElement {
  const panel = h('div', { class: 'uploads', 'aria-live': 'polite' });
  const hint = api.may('move_entries') && api.target === null ? 'Drop files here to upload them into this folder.' : null;
  if (!hint) return panel;
  zone.setAttribute('data-drop-hint', hint);
  const over = (e: DragEvent) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    zone.classList.add('drop-target');
  };
  zone.addEventListener('dragenter', over);
  zone.addEventListener('dragover', over);
  zone.addEventListener('dragleave', (e) => {
    if (e.target === zone) zone.classList.remove('drop-target');
  });
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('drop-target');
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length) void Promise.all(files.map((f) => uploadOne(f))).then(done);
  });

  async function uploadOne(file: File): Promise<void> {
    const bar = h('div', { class: 'upload-bar' }, progressBar(0, `uploading ${file.name}`));
    const line = h('span', { class: 'muted' }, `${file.name} · 0 of ${formatBytes(file.size)}`);
    const row = h('div', { class: 'upload-row', 'data-file': file.name }, bar, line);
    panel.append(row);
    try {
      const staged = await api.upload(file, (sent, total) => {
        bar.replaceChildren(progressBar(total ? (sent / total) * 100 : 100, `uploading ${file.name}`));
        line.textContent = `${file.name} · ${formatBytes(sent)} of ${formatBytes(total)}`;
      }, signal);
      const to = folder ? `${folder}/${file.name}` : file.name;
      await api.answer<MovedEntry[]>('move_entries', { moves: [{ from: staged.path, to }] }, { signal });
      row.setAttribute('data-state', 'done');
      line.textContent = `${to} · ${formatBytes(staged.size)} · sha256 ${staged.sha256.slice(0, 12)}…`;
    } catch (err) {
      row.setAttribute('data-state', 'failed');
      row.replaceChildren(notice(`${file.name}: ${errorText(err)}`, 'error'));
    }
  }
  return panel;
}
