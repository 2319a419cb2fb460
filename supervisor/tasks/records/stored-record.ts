import { closeSync, readSync } from 'node:fs';
import type { TaskState, TaskStatus } from '../../../schemas/tasks.js';
import type { Stamp, TaskRecord } from './task-record.js';
import { partsOf, taskDirOf, type TaskIdParts } from './task-ids.js';

/**
 * Finished records as the index keeps them (see index-file.ts for the file they come from): a
 * small object each, the status left as JSON text in memory or in an index file.
 */
/** States by number (a stored record keeps the number). */
const STATE_LIST: ReadonlyArray<TaskState | undefined> = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/** The stamp of a directory's stats (without keeping the stats). */
export function stampOf(stats: Stamp): Stamp {
  return { ino: stats.ino, mtimeMs: stats.mtimeMs };
}

/** What the records of one index file share: the workspace, and the file their statuses are in. */
export interface RecordHome {
  readonly workspace: string;
  readonly source: IndexSource | null;
}

/** An index file held open while records point into it (a newer file may have replaced its name). */
export class IndexSource {
  #fd: number | undefined;

  constructor(fd: number) {
    this.#fd = fd;
  }

  read(offset: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    this.readInto(buf, 0, offset, length);
    return buf;
  }

  /** Reads `length` bytes at `offset` into `into` at `at` (no allocation). */
  readInto(into: Buffer, at: number, offset: number, length: number): void {
    if (this.#fd === undefined) throw new Error('the task index file is closed (the service is stopping)');
    for (let done = 0; done < length; ) {
      const n = readSync(this.#fd, into, at + done, length - done, offset + done);
      if (n === 0) throw new Error('the task index file is shorter than its records say');
      done += n;
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/**
 * A finished (or metadata-only) record: the few fields queries need, its status left as JSON text
 * (in memory, or a byte range of an index file) and parsed each time someone reads it, so that a
 * long history costs a small object per record. Its parts and directory are derived from the ID.
 */
export class StoredRecord implements TaskRecord {
  /** The directory's stamp as two numbers (ino -1: none), no object per record. */
  readonly #ino: number;
  readonly #mtimeMs: number;
  /** The state's number in STATE_LIST (7: none), plus 8 when a metadata record exists. */
  readonly #flags: number;

  constructor(
    readonly home: RecordHome,
    readonly id: string,
    stamp: Stamp | null,
    state: TaskState | undefined,
    hasMetadata: boolean,
    readonly createdAt: string | null,
    readonly sources: readonly string[],
    /** The status JSON text, its byte length at `offset` of `home.source`, or null (metadata only). */
    readonly text: string | number | null,
    readonly offset = 0,
  ) {
    this.#ino = stamp?.ino ?? -1;
    this.#mtimeMs = stamp?.mtimeMs ?? 0;
    this.#flags = (state === undefined ? 7 : STATE_LIST.indexOf(state)) | (hasMetadata ? 8 : 0);
  }

  get stamp(): Stamp | undefined {
    return this.#ino < 0 ? undefined : { ino: this.#ino, mtimeMs: this.#mtimeMs };
  }

  /** Whether the directory still has the stamp this record was read with. */
  matches(stats: Stamp): boolean {
    return stats.ino === this.#ino && stats.mtimeMs === this.#mtimeMs;
  }

  get state(): TaskState | undefined {
    return STATE_LIST[this.#flags & 7];
  }

  get hasMetadata(): boolean {
    return (this.#flags & 8) !== 0;
  }

  get workspace(): string {
    return this.home.workspace;
  }

  get source(): IndexSource | null {
    return this.home.source;
  }

  get parts(): TaskIdParts {
    return partsOf(this.id);
  }

  get dir(): string {
    return taskDirOf(this.workspace, this.id, this.parts);
  }

  /** The status JSON text (null for a metadata-only directory). */
  json(): string | null {
    const text = this.text;
    return typeof text !== 'number' ? text : this.source!.read(this.offset, text).toString('utf8');
  }

  /** Parsed on every read: keeping it would grow the memory of a history with each record read. */
  get status(): TaskStatus | null {
    const json = this.json();
    return json === null ? null : (JSON.parse(json) as TaskStatus);
  }
}


/** True for a record whose status text lies in an index file. */
export function inFile(r: TaskRecord): r is StoredRecord & { text: number } {
  return r instanceof StoredRecord && typeof r.text === 'number';
}
