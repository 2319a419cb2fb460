import { watch, type FSWatcher } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProgressEvent } from '../../schemas/events.js';
import type { TaskLogChunk } from '../../schemas/tasks.js';
import { isTerminal, TASK_FILES } from '../../workers/task-runner/record-files.js';
import { readLogWindow } from './log-reader.js';
import { readStatus } from './records.js';
import type { TaskIndex, TaskRecord } from './task-index.js';

/** Slowest safety re-read of a live Task's files; followers may ask for a tighter bound. */
const DEFAULT_STALENESS_MS = 1000;
const MIN_STALENESS_MS = 50;
/** Largest log chunk one event carries to a follower. */
export const FOLLOW_WINDOW_BYTES = 65536;

type Part = 'status' | 'log' | 'events';

const EVERYTHING: Part[] = ['events', 'log', 'status'];

/** What a change to one name in the Task directory calls for. */
function readsFor(file: string | null): Part[] {
  if (file === TASK_FILES.log) return ['log'];
  if (file === TASK_FILES.events) return ['events'];
  // The status says when metadata exists, and the temp files of atomic writes (dot names) only
  // matter once renamed onto status.json, which raises an event of its own.
  if (file === TASK_FILES.metadata || file?.startsWith('.')) return [];
  return EVERYTHING;
}

/**
 * One `fs.watch` on the directory of a queued or running Task. Every event means "re-read from
 * my last offset": new lines of `events.jsonl` become progress events, growth of `task.log` is
 * noted, a new `status.json` updates the index. All followers of the Task share this one watch,
 * its progress list and its cached log reads; a slow timer re-checks in case an event was missed.
 * Reads go events → log → status, so once the status is terminal everything before it is known.
 */
export class LiveTask {
  readonly progress: ProgressEvent[] = [];
  logSize = 0;
  readonly #index: TaskIndex;
  readonly #record: TaskRecord;
  readonly #onSettled: () => void;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stalenessMs = DEFAULT_STALENESS_MS;
  #eventsOffset = 0;
  #pending = new Set<Part>();
  #running: Promise<void> | undefined;
  #logReads = new Map<number, Promise<TaskLogChunk>>();
  #closed = false;

  /** `unread`: files may have changed since `record` was read, so read everything once now. */
  constructor(index: TaskIndex, record: TaskRecord, unread: boolean, onSettled: () => void) {
    this.#index = index;
    this.#record = record;
    this.#onSettled = onSettled;
    try {
      this.#watcher = watch(record.dir, (_event, file) => this.#request(readsFor(file)));
      this.#watcher.on('error', () => this.#request(EVERYTHING));
    } catch {
      // The directory vanished already: the safety timer and the status read settle it.
    }
    this.#arm();
    if (unread) this.#request(EVERYTHING);
  }

  get id(): string {
    return this.#record.id;
  }

  /** The run this watcher follows; a replacement run gets a watcher of its own. */
  get runId(): string {
    return this.#record.status?.run_id ?? '';
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Lowers the staleness bound (a follower's poll_interval); never raises it. */
  requestStaleness(ms: number): void {
    const bounded = Math.max(MIN_STALENESS_MS, ms);
    if (bounded < this.#stalenessMs) {
      this.#stalenessMs = bounded;
      this.#arm();
    }
  }

  /**
   * A log window; followers at the same offset share one read per log size. Still answers once
   * closed (the Task ended): the log is complete then, and the last windows are shared too.
   */
  readLog(offset: number): Promise<TaskLogChunk> {
    let read = this.#logReads.get(offset);
    if (!read) {
      read = readLogWindow(join(this.#record.dir, TASK_FILES.log), offset, FOLLOW_WINDOW_BYTES);
      this.#logReads.set(offset, read);
    }
    return read;
  }

  /** Re-reads everything now and waits for it (used before a terminal answer). */
  async refresh(): Promise<void> {
    this.#request(EVERYTHING);
    while (this.#running) await this.#running;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Reads after the end start afresh (lines may have landed after the last size check), then are shared.
    this.#logReads.clear();
    this.#watcher?.close();
    clearInterval(this.#timer);
  }

  #arm(): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#request(EVERYTHING), this.#stalenessMs);
    this.#timer.unref();
  }

  #request(parts: Part[]): void {
    if (this.#closed || parts.length === 0) return;
    for (const p of parts) this.#pending.add(p);
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  async #drain(): Promise<void> {
    while (this.#pending.size && !this.#closed) {
      const parts = new Set(this.#pending);
      this.#pending.clear();
      let changed = false;
      if (parts.has('events')) changed = (await this.#readEvents()) || changed;
      if (parts.has('log') || parts.has('status')) changed = (await this.#readLogSize()) || changed;
      if (parts.has('status')) await this.#readStatus();
      if (changed) this.#index.notify(this.#record.id);
    }
  }

  async #readEvents(): Promise<boolean> {
    const handle = await open(join(this.#record.dir, TASK_FILES.events), 'r').catch(() => undefined);
    if (!handle) return false;
    try {
      const size = (await handle.stat()).size;
      if (size <= this.#eventsOffset) return false;
      const buf = Buffer.alloc(size - this.#eventsOffset);
      const { bytesRead } = await handle.read(buf, 0, buf.length, this.#eventsOffset);
      // Only whole lines count; a partial last line is read again next time.
      const end = buf.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
      this.#eventsOffset += end;
      for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const event = JSON.parse(line) as ProgressEvent;
          if (event.kind !== 'progress' || typeof event.name !== 'string') continue;
          this.progress.push(event);
          this.#index.events.emit('task:progress', { id: this.#record.id, event });
        } catch {
          // A damaged line is skipped; the status still carries the step.
        }
      }
      return end > 0;
    } finally {
      await handle.close();
    }
  }

  async #readLogSize(): Promise<boolean> {
    const size = await stat(join(this.#record.dir, TASK_FILES.log)).then((s) => s.size, () => 0);
    if (size === this.logSize) return false;
    this.logSize = size;
    this.#logReads.clear();
    this.#index.events.emit('task:log', { id: this.#record.id, size });
    return true;
  }

  async #readStatus(): Promise<void> {
    const { id, dir, parts } = this.#record;
    const status = await readStatus(dir, id, parts.type);
    const known = this.#index.get(id)?.status;
    if (!status) {
      // The directory is gone or no longer valid (deleted, replaced): let the index decide.
      if (!(await this.#index.load(id))?.status) this.#settle();
      return;
    }
    if (status.run_id !== this.runId) return this.#settle();
    if (!known || JSON.stringify(known) !== JSON.stringify(status)) this.#index.setStatus(id, parts, status);
    if (isTerminal(status.state)) this.#settle();
  }

  #settle(): void {
    this.close();
    this.#onSettled();
  }
}
