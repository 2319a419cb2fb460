import type { TaskLogChunk } from '../api/types.js';
import { h } from './dom.js';
import { formatBytes } from './format.js';

/** A log chunk as both `read_task_log` and `log` events carry it (byte offsets). */
export type Chunk = Pick<TaskLogChunk, 'content' | 'start_offset' | 'next_offset' | 'reset'> & Partial<Pick<TaskLogChunk, 'file_size' | 'has_more_before'>>;

/** Reads `[offset, offset+limit)` of the log; used to fill gaps and to load earlier text. */
export type ReadLog = (offset: number, limit: number) => Promise<TaskLogChunk>;

const MAX_READ = 262_144;
/** The page keeps at most this much log text; older text is dropped and can be loaded again. */
const MAX_HELD = 8 * 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The text of a Task log held as one contiguous byte window `[start, end)`. Chunks are placed
 * by their byte offsets: overlap with what is held is dropped, a gap is read with
 * `read_task_log` before the chunk is placed, and a reset starts over. What the window already
 * has is never fetched again.
 */
export class LogWindow {
  readonly element: HTMLElement;
  readonly #pre = h('pre', { class: 'code log', tabindex: 0, 'aria-label': 'Task log' });
  readonly #info = h('span', { class: 'muted' });
  readonly #earlier = h('button', { type: 'button', class: 'small', hidden: true }, 'Load earlier');
  readonly #follow = h('input', { type: 'checkbox', checked: true, id: 'follow-log' });
  readonly #search = h('input', { type: 'search', class: 'log-search', placeholder: 'Find in log', 'aria-label': 'Find in log' });
  readonly #found = h('span', { class: 'muted log-found', 'aria-live': 'polite' });
  /** Where the last match ended (characters into the held text): Enter finds the next one. */
  #searchFrom = 0;
  #start = 0;
  #end = -1;
  #size = 0;
  #queue: Promise<void> = Promise.resolve();
  /** The text nodes in order with their byte lengths, so the front can be dropped by bytes. */
  #pieces: Array<{ node: Text; bytes: number }> = [];

  constructor(private readonly read: ReadLog) {
    this.#earlier.addEventListener('click', () => void this.#loadEarlier());
    this.#search.addEventListener('input', () => ((this.#searchFrom = 0), this.#find()));
    this.#search.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.#find();
    });
    this.element = h(
      'div',
      { class: 'log-window' },
      h('div', { class: 'log-bar' }, this.#info, this.#earlier, this.#search, this.#found, h('label', { class: 'follow', for: 'follow-log' }, this.#follow, 'follow')),
      this.#pre,
    );
    this.#render();
  }

  /** Bytes held so far: the offset the next read starts at (-1 before the first chunk). */
  get end(): number {
    return this.#end;
  }

  /** Places a chunk; calls are queued so gaps are filled in order. */
  add(chunk: Chunk): Promise<void> {
    this.#queue = this.#queue.then(() => this.#place(chunk)).catch((err: unknown) => {
      this.#info.textContent = `log: ${err instanceof Error ? err.message : String(err)}`;
    });
    return this.#queue;
  }

  async #place(chunk: Chunk): Promise<void> {
    if (chunk.file_size !== undefined) this.#size = Math.max(this.#size, chunk.file_size);
    if (chunk.reset || this.#end < 0) {
      const node = document.createTextNode(chunk.content);
      this.#pre.replaceChildren(node);
      this.#pieces = [{ node, bytes: chunk.next_offset - chunk.start_offset }];
      this.#start = chunk.start_offset;
      this.#end = chunk.next_offset;
      this.#earlier.hidden = !(chunk.has_more_before ?? chunk.start_offset > 0);
      this.#render();
      // A log opens at its tail, where a followed Task writes.
      if (this.#follow.checked) this.#pre.scrollTop = this.#pre.scrollHeight;
      return;
    }
    if (chunk.next_offset <= this.#end) return; // Already held.
    if (chunk.start_offset > this.#end) await this.#fillGap(chunk.start_offset);
    const skip = this.#end - chunk.start_offset;
    const text = skip <= 0 ? chunk.content : decoder.decode(encoder.encode(chunk.content).subarray(skip));
    this.#append(text, chunk.next_offset);
  }

  /** Reads `[end, upTo)` from the log so a chunk that starts later joins without a hole. */
  async #fillGap(upTo: number): Promise<void> {
    while (this.#end < upTo) {
      const part = await this.read(this.#end, Math.max(1024, Math.min(MAX_READ, upTo - this.#end)));
      if (part.reset || part.next_offset <= this.#end) return;
      const text = part.next_offset > upTo ? decoder.decode(encoder.encode(part.content).subarray(0, upTo - part.start_offset)) : part.content;
      this.#append(text, Math.min(part.next_offset, upTo));
    }
  }

  #append(text: string, end: number): void {
    const pinned = this.#pre.scrollTop + this.#pre.clientHeight >= this.#pre.scrollHeight - 4;
    const node = document.createTextNode(text);
    this.#pre.append(node);
    this.#pieces.push({ node, bytes: end - this.#end });
    this.#end = end;
    this.#size = Math.max(this.#size, end);
    this.#trim();
    this.#render();
    if (this.#follow.checked && pinned) this.#pre.scrollTop = this.#pre.scrollHeight;
  }

  async #loadEarlier(): Promise<void> {
    this.#earlier.disabled = true;
    const from = Math.max(0, this.#start - MAX_READ);
    try {
      const part = await this.read(from, Math.max(1024, this.#start - from));
      const keep = decoder.decode(encoder.encode(part.content).subarray(0, this.#start - part.start_offset));
      const node = document.createTextNode(keep);
      this.#pre.prepend(node);
      this.#pieces.unshift({ node, bytes: this.#start - part.start_offset });
      this.#start = part.start_offset;
      this.#earlier.hidden = this.#start === 0;
    } finally {
      this.#earlier.disabled = false;
      this.#render();
    }
  }

  /** A log followed all day must not grow the page without bound: drop the oldest pieces. */
  #trim(): void {
    while (this.#end - this.#start > MAX_HELD && this.#pieces.length > 1) {
      const first = this.#pieces.shift()!;
      first.node.remove();
      this.#start += first.bytes;
      this.#earlier.hidden = false;
    }
  }

  /**
   * Selects the next match of the search text in the held log (after the last one, wrapping
   * around), scrolls it into view and says how many there are. Following stops, or the next
   * line written would scroll the match away.
   */
  #find(): void {
    const term = this.#search.value;
    if (term === '') return void (this.#found.textContent = '');
    const text = this.#pre.textContent ?? '';
    const lower = text.toLowerCase();
    const needle = term.toLowerCase();
    let count = 0;
    for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + needle.length)) count++;
    if (count === 0) return void (this.#found.textContent = 'no match');
    let at = lower.indexOf(needle, this.#searchFrom);
    if (at === -1) at = lower.indexOf(needle);
    this.#searchFrom = at + needle.length;
    this.#follow.checked = false;
    const range = document.createRange();
    const start = this.#position(at);
    const end = this.#position(at + needle.length);
    range.setStart(start.node, start.offset);
    range.setEnd(end.node, end.offset);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    const box = range.getBoundingClientRect();
    const pre = this.#pre.getBoundingClientRect();
    this.#pre.scrollTop += box.top - pre.top - this.#pre.clientHeight / 2;
    this.#found.textContent = `${count} match${count === 1 ? '' : 'es'}`;
  }

  /** The text node and offset of character `at` of the held text. */
  #position(at: number): { node: Text; offset: number } {
    let seen = 0;
    for (const { node } of this.#pieces) {
      const length = node.data.length;
      if (at <= seen + length) return { node, offset: at - seen };
      seen += length;
    }
    const last = this.#pieces.at(-1)!.node;
    return { node: last, offset: last.data.length };
  }

  #render(): void {
    this.#info.textContent = this.#end < 0 ? 'waiting for the log…' : `bytes ${formatBytes(this.#start)} – ${formatBytes(this.#end)} of ${formatBytes(Math.max(this.#size, this.#end))}`;
  }
}
