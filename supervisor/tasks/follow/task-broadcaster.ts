import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EmitShared } from '../../../core/shared-events.js';
import type { JobEvent, LogEvent, ProgressEvent } from '../../../schemas/events.js';
import type { TaskLogChunk } from '../../../schemas/tasks.js';

/** Where a follower stands: progress events sent, and the log offset read up to. */
export interface FollowPoint {
  readonly progress: number;
  readonly offset: number;
}

/** The progress events of a live Task, numbered from its first (see ProgressWindow). */
export interface ProgressSource {
  readonly count: number;
  slice(from: number, to: number): ProgressEvent[];
}

/** What a broadcaster reads: the live Task's progress events, log size and shared log reads. */
export interface BroadcastSource {
  readonly progress: ProgressSource;
  readonly logSize: number;
  readLog(offset: number): Promise<TaskLogChunk>;
}

/** Log events by the (shared) chunk they carry: followers at one offset share the event, and so its frame. */
const logEvents = new WeakMap<TaskLogChunk, LogEvent>();

/** The log event of a window read at `offset`, or null when the window brings nothing. */
export function logEventOf(chunk: TaskLogChunk, offset: number): LogEvent | null {
  if (chunk.next_offset === offset || (chunk.next_offset === chunk.start_offset && !chunk.reset)) return null;
  let event = logEvents.get(chunk);
  if (!event) logEvents.set(chunk, (event = eventOf(chunk)));
  return event;
}

/**
 * `{kind: 'log', ...chunk, channel: 'task'}`, but copying the chunk's properties as they are: a
 * spread would read a live window's text (log-reader.ts) into a string the event then kept.
 */
function eventOf(chunk: TaskLogChunk): LogEvent {
  const event = Object.defineProperties({ kind: 'log' }, Object.getOwnPropertyDescriptors(chunk)) as LogEvent;
  event.channel = 'task';
  return event;
}

interface Member {
  readonly emit: EmitShared;
  /** Hands the follower back its own way, at the point it stands. */
  readonly leave: (at: FollowPoint) => void;
}

/**
 * The followers of one live Task that are up to date, written to together: when the Task changes,
 * what the change brings is read and made into one event list once, and each member gets it in one
 * synchronous write of shared bytes (no promise, timer or event object per follower). A follower
 * that falls behind (its socket backpressured, or gone) leaves with the point it reached and
 * follows on its own until it catches up and joins again.
 */
export class TaskBroadcaster {
  readonly #source: BroadcastSource;
  readonly #members = new Set<Member>();
  /** What every member has been sent. */
  #at: FollowPoint = { progress: 0, offset: 0 };
  #running: Promise<void> | null = null;
  #again = false;
  #closed = false;

  constructor(source: BroadcastSource) {
    this.#source = source;
  }

  get size(): number {
    return this.#members.size;
  }

  /**
   * Follows from `at`, with a writer that is idle now. Resolves with the point the follower stands
   * at once it has to go its own way (backpressure, the Task ended, `signal` aborted), or with null
   * at once when `at` is not where the members stand (it catches up, or waits for a change, first).
   * The first follower of an empty broadcaster sets the point.
   */
  async join(emit: EmitShared, at: FollowPoint, signal: AbortSignal): Promise<FollowPoint | null> {
    while (this.#running) await this.#running;
    if (this.#closed || signal.aborted) return null;
    if (this.#members.size === 0) this.#at = at;
    else if (at.progress !== this.#at.progress || at.offset !== this.#at.offset) return null;
    return new Promise<FollowPoint>((resolve) => {
      const member: Member = {
        emit,
        leave: (point) => {
          signal.removeEventListener('abort', onAbort);
          resolve(point);
        },
      };
      const onAbort = () => {
        if (this.#members.delete(member)) member.leave(this.#at);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#members.add(member);
    });
  }

  /** The Task changed: members get what it brings. Called before followers on their own are woken. */
  changed(): void {
    if (this.#closed || this.#members.size === 0) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#broadcast()
      .catch(() => this.#dismiss()) // a failed read: every member reads for itself (and meets the error there)
      .finally(() => (this.#running = null));
  }

  /** The Task ended: every member finishes on its own (the last windows, the terminal status). */
  close(): void {
    this.#closed = true;
    this.#dismiss();
  }

  #dismiss(): void {
    for (const member of this.#members) member.leave(this.#at);
    this.#members.clear();
  }

  async #broadcast(): Promise<void> {
    do {
      this.#again = false;
      const before = this.#at;
      const source = this.#source;
      const progress = source.progress.count;
      const events: JobEvent[] = source.progress.slice(before.progress, progress);
      let offset = before.offset;
      if (offset < source.logSize) {
        const chunk = await source.readLog(offset);
        const log = logEventOf(chunk, offset);
        if (log) {
          events.push(log);
          offset = chunk.next_offset;
          // A burst beyond one window: the next window goes in the next write.
          if (offset < source.logSize) this.#again = true;
        }
      }
      if (this.#closed) return;
      const after: FollowPoint = { progress, offset };
      if (events.length) this.#send(events, before, after);
      this.#at = after;
      // A burst of many windows: a turn between them lets other work (and other Tasks) go first.
      if (this.#again && offset < source.logSize) await nextTurn();
    } while (this.#again && this.#members.size > 0 && !this.#closed);
  }

  /** One shared write per member; a member it does not leave ready for more leaves. */
  #send(events: readonly JobEvent[], before: FollowPoint, after: FollowPoint): void {
    for (const member of this.#members) {
      const written = member.emit(events);
      if (written === 'sent') continue;
      this.#members.delete(member);
      member.leave(written === 'full' ? after : before);
    }
  }
}
