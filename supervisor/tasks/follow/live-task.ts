import { closeSync, readSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { ProgressEvent } from '../../../schemas/events.js';
import type { TaskLogChunk, TaskStatus } from '../../../schemas/tasks.js';
import { isTempFile, TASK_FILES } from '../../../core/task-record/record-files.js';
import { cutStepName, MAX_STEP_NAME } from '../../../core/task-record/step-limits.js';
import { readLogWindowSync } from './log-reader.js';
import { ProgressWindow } from './progress-window.js';
import { readStatus } from '../records/records.js';
import { TaskBroadcaster } from './task-broadcaster.js';
import { openTaskFileSync } from '../records/task-file.js';
import type { TaskIndex } from '../records/task-index.js';
import type { TaskIdParts } from '../records/task-ids.js';

/** Slowest safety re-read of a live Task's files; followers may ask for a tighter bound. */
const DEFAULT_STALENESS_MS = 1000;
const MIN_STALENESS_MS = 50;
/** Largest log chunk one event carries to a follower. */
export const FOLLOW_WINDOW_BYTES = 65536;
/**
 * Log windows kept for sharing (64 windows: 4 MiB of log, about 12 MiB with their events and
 * frames, per Task while followers read its history). Followers of a big log drift apart as their
 * sockets take bytes at different speeds: with the 4 latest windows kept, 20 followers of a log
 * being written shared almost no read, and each window was decoded, serialized and framed once per
 * follower (most of the service's time, and its garbage). Keeping every window (until the log grew,
 * or for good once the Task ended) held the whole log in memory: a 128 MiB log read by one late
 * follower grew the heap by 254 MiB.
 */
const LOG_READS_KEPT = 64;

/**
 * How much a window read at `offset` takes: up to the next multiple of FOLLOW_WINDOW_BYTES. A
 * window that ends where the log ended (at the live edge) leaves its follower at an odd offset;
 * cut this way, the follower's next windows fall on the same boundaries as everyone else's, so
 * followers trailing the same stretch of log read, serialize and frame each window once, not once
 * each. A remainder too small to hold a character (the window before stopped short of one that
 * straddles the boundary) runs on to the boundary after, so no read comes back empty and the next
 * window is aligned again (such a window is at most 3 bytes longer than the others).
 */
export function alignedLimit(offset: number): number {
  const rest = FOLLOW_WINDOW_BYTES - (offset % FOLLOW_WINDOW_BYTES);
  return rest < 4 ? rest + FOLLOW_WINDOW_BYTES : rest;
}
/**
 * Most bytes of `events.jsonl` read at a time (the rest is read a turn later): a runner writes
 * lines of a few hundred bytes, and a Task that wrote a huge file, or one long line (skipped),
 * must not make the service read it into memory whole.
 */
const EVENTS_READ_BYTES = 256 * 1024;

type Part = 'status' | 'log' | 'events';

const EVERYTHING: Part[] = ['events', 'log', 'status'];

/** What a change to one name in the Task directory calls for. */
function readsFor(file: string | null): Part[] {
  if (file === TASK_FILES.log) return ['log'];
  if (file === TASK_FILES.events) return ['events'];
  // The status says when metadata exists, and temp files only matter once renamed onto status.json.
  if (file === TASK_FILES.metadata || (file && isTempFile(file))) return [];
  return EVERYTHING;
}

/** Who a live Task is: its record's place and its run. */
export interface LiveRun {
  readonly id: string;
  readonly parts: TaskIdParts;
  readonly dir: string;
  readonly runId: string;
}

/**
 * One `fs.watch` on the directory of a running Task, owned by its run. Every event means
 * "re-read from my last offset": new lines of `events.jsonl` become progress events, growth of
 * `task.log` is noted, and each `status.json` of this run is handed to the owner, which shows it
 * in the index (or publishes a terminal one) if it is a legal next state of the run. All followers share this watch, its progress list and
 * its cached log reads; a slow timer re-checks in case an event was missed. Reads go events → log →
 * status, so once the status is terminal everything before it is known. Files the Task replaced
 * with something else (a directory, a FIFO, a link) are not read, and nothing here throws.
 *
 * The progress and log reads are synchronous: the runner just wrote those bytes, so they come from
 * the page cache in microseconds, while the thread-pool round trips they replace (open, stat, read,
 * close: seven in a row from a log change to its broadcast) each waited for a core, and on a loaded
 * 2-core machine made most of a follower's delay (bench/followers.ts).
 */
export class LiveTask {
  /** The progress events followers may be owed (the latest; see ProgressWindow). */
  readonly progress = new ProgressWindow();
  logSize = 0;
  readonly #index: TaskIndex;
  readonly #run: LiveRun;
  readonly #onStatus: (status: TaskStatus) => void;
  readonly #refused = new Set<string>();
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stalenessMs = DEFAULT_STALENESS_MS;
  #eventsOffset = 0;
  /** Inside a line longer than EVENTS_READ_BYTES: skipped up to its end. */
  #overlong = false;
  #pending = new Set<Part>();
  #running: Promise<void> | undefined;
  /** Shared log reads by offset; `partial` for a window that ended at the end of the log then. */
  #logReads = new Map<number, { read: Promise<TaskLogChunk>; partial: boolean }>();
  #broadcaster: TaskBroadcaster | undefined;
  #closed = false;

  /** `onStatus` gets every status of this run read from disk: the run owns what the index shows. */
  constructor(index: TaskIndex, run: LiveRun, onStatus: (status: TaskStatus) => void) {
    this.#index = index;
    this.#run = run;
    this.#onStatus = onStatus;
    try {
      this.#watcher = watch(run.dir, (_event, file) => this.#request(readsFor(file)));
      this.#watcher.on('error', () => this.#request(EVERYTHING));
    } catch {
      // The directory vanished already: the owner settles the run when its runner ends.
    }
    this.#arm();
    this.#request(EVERYTHING);
  }

  get id(): string {
    return this.#run.id;
  }

  get runId(): string {
    return this.#run.runId;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The followers that are up to date, written to together (made on first use). */
  get broadcaster(): TaskBroadcaster {
    return (this.#broadcaster ??= new TaskBroadcaster(this));
  }

  /** Lowers the staleness bound (a follower's poll_interval); never raises it. */
  requestStaleness(ms: number): void {
    const bounded = Math.max(MIN_STALENESS_MS, ms);
    if (bounded < this.#stalenessMs && !this.#closed) {
      this.#stalenessMs = bounded;
      this.#arm();
    }
  }

  /**
   * A log window; followers at the same offset share one read per log size (of the few latest
   * windows read). Still answers once closed (the Task ended): the log is complete then, and the
   * last windows are shared too.
   */
  readLog(offset: number): Promise<TaskLogChunk> {
    const kept = this.#logReads.get(offset);
    if (kept) return kept.read;
    let chunk: TaskLogChunk;
    try {
      chunk = readLogWindowSync(join(this.#run.dir, TASK_FILES.log), offset, alignedLimit(offset));
    } catch (err) {
      return Promise.reject(err as Error); // a failed read is not shared: the next follower tries again
    }
    const read = Promise.resolve(chunk);
    this.#logReads.set(offset, { read, partial: !chunk.has_more_after });
    // Oldest first (insertion order): windows of lagging followers make room for newer ones.
    if (this.#logReads.size > LOG_READS_KEPT) this.#logReads.delete(this.#logReads.keys().next().value!);
    return read;
  }

  /** Re-reads everything now and waits for it (the owner's last look once the runner is gone). */
  async refresh(): Promise<void> {
    this.#request(EVERYTHING);
    while (this.#running) await this.#running;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Reads after the end start afresh (lines may have landed after the last size check), then are shared.
    this.#logReads.clear();
    this.#broadcaster?.close();
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
    this.#running ??= this.#drain()
      .catch((err: unknown) => console.error(`taskyard: ${this.#run.id}: reading its files failed`, err))
      .finally(() => (this.#running = undefined));
  }

  async #drain(): Promise<void> {
    while (this.#pending.size && !this.#closed) {
      const parts = new Set(this.#pending);
      this.#pending.clear();
      let changed = false;
      if (parts.has('events')) changed = this.#guard('events', () => this.#readEvents()) || changed;
      if (parts.has('log') || parts.has('status')) changed = this.#guard('log', () => this.#readLogSize()) || changed;
      // The broadcaster needs only progress and log: its followers do not wait for the status read.
      // It goes before any follower is woken: one woken after it finds it busy and waits to join.
      if (changed) this.#broadcaster?.changed();
      if (parts.has('status')) await this.#guardAsync('status', () => this.#readStatus());
      // After the status: a runner writes progress and status together, and a status change
      // notifies too; followers then wake once for both (a second notify in this tick finds none waiting).
      if (changed) this.#index.notify(this.#run.id);
    }
  }

  /** One read, whatever the Task did to its files: a failure is logged once per file and skipped. */
  #guard(what: string, read: () => boolean): boolean {
    try {
      return read();
    } catch (err) {
      return this.#refuse(what, err);
    }
  }

  async #guardAsync(what: string, read: () => Promise<boolean>): Promise<boolean> {
    try {
      return await read();
    } catch (err) {
      return this.#refuse(what, err);
    }
  }

  #refuse(what: string, err: unknown): false {
    if (!this.#refused.has(what)) {
      this.#refused.add(what);
      console.error(`taskyard: ${this.#run.id}: its ${what} file is not read: ${(err as Error).message}`);
    }
    return false;
  }

  #readEvents(): boolean {
    const opened = openTaskFileSync(join(this.#run.dir, TASK_FILES.events));
    if (!opened) return false;
    const { fd, stat: { size } } = opened;
    const from = this.#eventsOffset;
    try {
      if (size <= from) return false;
      const buf = Buffer.alloc(Math.min(size - from, EVENTS_READ_BYTES));
      const read = buf.subarray(0, readSync(fd, buf, 0, buf.length, from));
      // Only whole lines count; a partial last line is read again next time.
      let start = 0;
      let taken = false;
      if (this.#overlong) start = read.indexOf(0x0a) + 1;
      const end = read.lastIndexOf(0x0a) + 1;
      if (this.#overlong && start === 0) {
        this.#eventsOffset += read.length; // still inside the overlong line
      } else if (end <= start) {
        // No whole line after `start`: one longer than a read is skipped, a shorter one waits for its end.
        this.#overlong = start === 0 && read.length === EVENTS_READ_BYTES;
        this.#eventsOffset += this.#overlong ? read.length : start;
      } else {
        this.#overlong = false;
        this.#eventsOffset += end;
        taken = this.#takeLines(read.subarray(start, end));
      }
      // More than one read's worth: the rest a turn later, so other work goes between.
      if (this.#eventsOffset > from && this.#eventsOffset < size) setImmediate(() => this.#request(['events']));
      return taken;
    } finally {
      closeSync(fd);
    }
  }

  /** Takes the progress events of whole lines; whether there was a line at all. */
  #takeLines(lines: Buffer): boolean {
    for (const line of lines.toString('utf8').split('\n')) {
      if (!line) continue;
      try {
        const event = JSON.parse(line) as ProgressEvent;
        if (event.kind !== 'progress' || typeof event.name !== 'string') continue;
        if (event.name.length > MAX_STEP_NAME) event.name = cutStepName(event.name);
        this.progress.push(event);
        this.#index.events.emit('task:progress', { id: this.#run.id, event });
      } catch {
        // A damaged line is skipped; the status still carries the step.
      }
    }
    return true;
  }

  #readLogSize(): boolean {
    const opened = openTaskFileSync(join(this.#run.dir, TASK_FILES.log));
    if (opened) closeSync(opened.fd);
    const size = opened?.stat.size ?? 0;
    if (size === this.logSize) return false;
    // A log only grows: a window with bytes after it stays what it was. One that ended at the end
    // now ends short; and a log that shrank was replaced or truncated, so nothing read stands.
    if (size < this.logSize) this.#logReads.clear();
    else for (const [offset, kept] of this.#logReads) if (kept.partial) this.#logReads.delete(offset);
    this.logSize = size;
    this.#index.events.emit('task:log', { id: this.#run.id, size });
    return true;
  }

  async #readStatus(): Promise<boolean> {
    const { id, dir, parts } = this.#run;
    const status = await readStatus(dir, id, parts.type);
    // Unreadable, or another run's: the owner decides when the runner ends.
    if (!status || status.run_id !== this.#run.runId || this.#closed) return false;
    this.#onStatus(status);
    return true;
  }
}
