import { errorText, type Api } from '../api/client.js';
import { h, notice } from './dom.js';
import { formatBytes } from './format.js';

/** Above this size a download is announced (with its size) and fetched only when confirmed. */
export const BIG_DOWNLOAD_BYTES = 100 * 1024 * 1024;
/** Above this size an image is not fetched until asked for. */
export const BIG_IMAGE_BYTES = 8 * 1024 * 1024;

const IMAGE = /\.(png|jpe?g|gif|webp|svg)$/i;

/** Whether the console shows this file as an image (png, jpeg, gif, webp, svg). */
export function isImage(path: string): boolean {
  return IMAGE.test(path);
}

const nameOf = (path: string) => path.split('/').pop() ?? path;

/** Hands a fetched Blob to the browser as a file download. */
function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // The click has started the download; the URL is not needed once it has been read.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A Download button for a workspace file. A big file is announced with its size first, since it
 * is fetched into the page's memory before it is saved.
 */
export function downloadButton(api: Api, path: string, size: number | null, onError: (text: string) => void, compact = false): HTMLButtonElement {
  const label = `Download ${nameOf(path)}`;
  const text = compact ? '↓' : '↓ Download';
  const button = h('button', { type: 'button', class: `small download${compact ? ' compact' : ''}`, 'aria-label': label, title: size === null ? label : `${label} (${formatBytes(size)})` }, text);
  button.addEventListener('click', () => {
    if (size !== null && size > BIG_DOWNLOAD_BYTES && !confirm(`${nameOf(path)} is ${formatBytes(size)}. Download it?`)) return;
    button.disabled = true;
    button.textContent = compact ? '…' : 'Downloading…';
    api
      .file(path)
      .then((blob) => saveBlob(blob, nameOf(path)))
      .catch((err: unknown) => onError(errorText(err)))
      .finally(() => {
        button.disabled = false;
        button.textContent = text;
      });
  });
  return button;
}

/**
 * An image from the workspace, fetched through the download route and shown in `<img>` (an svg
 * drawn there runs no script). A big image waits behind a button that says its size.
 */
export function imageView(api: Api, path: string, size: number | null, signal: AbortSignal, cls = 'image-preview'): HTMLElement {
  const box = h('div', { class: cls });
  const show = () => {
    box.replaceChildren(notice('Loading image…'));
    api
      .file(path, signal)
      .then((blob) => {
        const url = URL.createObjectURL(blob);
        signal.addEventListener('abort', () => URL.revokeObjectURL(url), { once: true });
        const img = h('img', { src: url, alt: nameOf(path), loading: 'lazy' });
        img.addEventListener('error', () => box.replaceChildren(notice(`${nameOf(path)} could not be shown as an image.`, 'error')));
        box.replaceChildren(img);
      })
      .catch((err: unknown) => box.replaceChildren(notice(errorText(err), 'error')));
  };
  if (size !== null && size > BIG_IMAGE_BYTES) {
    const button = h('button', { type: 'button', class: 'small' }, `Show image (${formatBytes(size)})`);
    button.addEventListener('click', show, { once: true });
    box.replaceChildren(h('p', { class: 'muted big-file' }, `A large image: ${formatBytes(size)}. `, button));
  } else show();
  return box;
}
