import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import type { TaskState, TaskStatus } from '../../schemas/tasks.js';
import type { TaskRecord } from './task-index.js';
import { partsOf, taskDirOf, type TaskIdParts } from './task-ids.js';

/**
 * The index file: every record the index held, one line each, in listing order, written
 * atomically into the service's private directory when the index is complete and when the
 * service stops. A start reads its short heads only; each status stays in the file, read when
 * asked for (a listing reads whole runs of lines at once, since they are in its order). Task
 * directories whose identity or mtime (`stamp`) differs are read from disk again: every record
 * write is a rename inside its directory, so a record changed while the service was down
 * changes that stamp.
 *
 * A line: `[id, ino, mtimeMs, state, hasMetadata, createdAt, sources]` as JSON, a tab, the status
 * JSON (or `null`). A record the service wrote itself has no stamp (null) and is re-read at the next
 * start. Version 2 files (`[id, "ino:mtimeMs", state, …]`) are read too.
 */
const VERSION_LINE = 'taskyard-task-index 3';
/** The previous format (stamp as one `ino:mtime` string), still read. */
const OLD_VERSION_LINE = 'taskyard-task-index 2';
/** Lines per write: their statuses lie within one read of the previous file (MAX_SPAN). */
const WRITE_BATCH = 1000;
const READ_BLOCK = 4 << 20;
/** Largest run of a listing read from the file at once. */
const MAX_SPAN = 1 << 20;
/**
 * Bytes of a listing chunk: small enough that building and writing one keeps other requests
 * waiting well under a millisecond, and that its string is young (V8 puts strings over ~128 KB
 * straight into the old generation, which only a full collection of the whole history frees).
 */
const CHUNK_BYTES = 48 << 10;
const NO_SOURCES: readonly string[] = Object.freeze([]);
/** States by number (a stored record keeps the number). */
const STATE_LIST: ReadonlyArray<TaskState | undefined> = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/** A directory's identity and mtime, as compared at start (`fs.Stats` is one). */
export interface Stamp {
  readonly ino: number;
  readonly mtimeMs: number;
}

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
function inFile(r: TaskRecord): r is StoredRecord & { text: number } {
  return r instanceof StoredRecord && typeof r.text === 'number';
}

/**
 * The status texts of `records` (null without a status): those in one index file close together
 * are read with one read; `other` answers the rest.
 */
export function statusTexts(records: readonly TaskRecord[], other: (record: TaskRecord) => string | null): Array<string | null> {
  let source: IndexSource | null = null;
  let lo = Infinity;
  let hi = 0;
  for (const r of records) {
    if (!inFile(r)) continue;
    source ??= r.source;
    if (r.source !== source) continue;
    lo = Math.min(lo, r.offset);
    hi = Math.max(hi, r.offset + r.text);
  }
  const span = source && hi - lo <= MAX_SPAN ? source.read(lo, hi - lo) : undefined;
  return records.map((r) => (span && inFile(r) && r.source === source ? span.toString('utf8', r.offset - lo, r.offset - lo + r.text) : other(r)));
}

/** Reused by statusChunk (synchronous, so one at a time): a chunk's bytes, and one run of an index file. */
let chunkBytes = Buffer.allocUnsafe(CHUNK_BYTES * 2);
let spanBytes = Buffer.allocUnsafe(0);

/**
 * The status texts of `records` from `from` on, each after a comma but the list's first, as one
 * string of about `CHUNK_BYTES` (at least one record), and the index of the next record. Bytes are copied from
 * the index file (one read for a run of it) and from in-memory texts into one reused buffer, so a
 * chunk is one young string: no string per record, nothing big enough for the old generation.
 */
export function statusChunk(records: readonly TaskRecord[], from: number, other: (record: TaskRecord) => string | null): { json: string; next: number } {
  let end = from;
  let size = 0;
  let source: IndexSource | null = null;
  let lo = Infinity;
  let hi = 0;
  for (; end < records.length && (end === from || size < CHUNK_BYTES); end++) {
    const r = records[end]!;
    if (!inFile(r)) continue;
    size += r.text + 1;
    source ??= r.source;
    if (r.source !== source) continue;
    lo = Math.min(lo, r.offset);
    hi = Math.max(hi, r.offset + r.text);
  }
  const span = source !== null && hi - lo <= MAX_SPAN;
  if (span) {
    if (spanBytes.length < hi - lo) spanBytes = Buffer.allocUnsafe(Math.max(hi - lo, 2 * spanBytes.length));
    source!.readInto(spanBytes, 0, lo, hi - lo);
  }
  let at = 0;
  for (let i = from; i < end; i++) {
    const r = records[i]!;
    const text = inFile(r) ? null : other(r);
    const length = text === null ? (inFile(r) ? r.text : 4) : Buffer.byteLength(text);
    if (chunkBytes.length < at + length + 1) {
      const grown = Buffer.allocUnsafe(Math.max(2 * chunkBytes.length, at + length + 1));
      chunkBytes.copy(grown, 0, 0, at);
      chunkBytes = grown;
    }
    if (i > 0) chunkBytes[at++] = 0x2c;
    if (inFile(r) && span && r.source === source) spanBytes.copy(chunkBytes, at, r.offset - lo, r.offset - lo + r.text);
    else if (inFile(r)) r.source!.readInto(chunkBytes, at, r.offset, r.text);
    else chunkBytes.write(text ?? 'null', at, 'utf8');
    at += length;
  }
  return { json: chunkBytes.toString('utf8', 0, at), next: end };
}

/** Writes the index file from `records` (temp file, then rename); `textsOf` gives their status texts. */
export async function writeIndexFile(file: string, records: readonly TaskRecord[], textsOf: (batch: readonly TaskRecord[]) => Array<string | null>): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.write(`${VERSION_LINE}\n`);
    for (let i = 0; i < records.length; i += WRITE_BATCH) {
      const batch = records.slice(i, i + WRITE_BATCH);
      const texts = textsOf(batch);
      const lines = batch.map((r, n) => {
        const stamp = r.stamp;
        return `${JSON.stringify([r.id, stamp?.ino ?? null, stamp?.mtimeMs ?? null, r.state ?? null, r.hasMetadata, r.createdAt, r.sources])}\t${texts[n] ?? 'null'}\n`;
      });
      await handle.write(lines.join(''));
    }
    await handle.close();
    await rename(temp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

type Head = [string, number | null, number | null, TaskState | null, boolean, string | null, string[]];
type OldHead = [string, string, TaskState | null, boolean, string | null, string[]];

/** A line head of either version as the current one. */
function headOf(json: string, old: boolean): Head {
  if (!old) return JSON.parse(json) as Head;
  const [id, stamp, ...rest] = JSON.parse(json) as OldHead;
  const colon = stamp.indexOf(':');
  return colon < 0 ? [id, null, null, ...rest] : [id, Number(stamp.slice(0, colon)), Number(stamp.slice(colon + 1)), ...rest];
}

/** One string per state, shared by every record in it. */
const STATES = new Map<string, TaskState>(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => [s, s as TaskState]));

/**
 * The records of an index file in its order, with the file held open for their statuses (none
 * when absent or unreadable). IDs are not checked here: a record is only used for a directory of
 * that exact, valid name.
 */
export function readIndexFile(file: string, workspace: string): { records: StoredRecord[]; source: IndexSource | undefined } {
  const records: StoredRecord[] = [];
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { records, source: undefined };
  }
  const source = new IndexSource(fd);
  const home: RecordHome = { workspace, source };
  let old = false;
  try {
    const size = fstatSync(fd).size;
    // One buffer for the whole file: the unfinished line moves to its start, the next block lands after it.
    let buf = Buffer.allocUnsafe(2 * READ_BLOCK);
    let carried = 0;
    let base = 0; // file offset of buf[0]
    let first = true;
    for (let at = 0; at < size; ) {
      const length = Math.min(READ_BLOCK, size - at);
      if (carried + length > buf.length) buf = Buffer.concat([buf.subarray(0, carried)], 2 * (carried + length));
      source.readInto(buf, carried, at, length);
      at += length;
      const filled = carried + length;
      let start = 0;
      for (let end = buf.indexOf(10, start); end !== -1 && end < filled; start = end + 1, end = buf.indexOf(10, start)) {
        if (first) {
          first = false;
          const version = buf.toString('utf8', start, end);
          if (version !== VERSION_LINE && version !== OLD_VERSION_LINE) throw new Error('an index file of another version');
          old = version === OLD_VERSION_LINE;
          continue;
        }
        const tab = buf.indexOf(9, start);
        const [id, ino, mtimeMs, state, hasMetadata, createdAt, sources] = headOf(buf.toString('utf8', start, tab), old);
        if (typeof id !== 'string' || typeof ino !== 'number' || typeof mtimeMs !== 'number') continue;
        const length = end - tab - 1;
        const isNull = length === 4 && buf[tab + 1] === 0x6e;
        const known = state === null ? undefined : STATES.get(state);
        records.push(new StoredRecord(home, id, { ino, mtimeMs }, known, hasMetadata, createdAt, sources.length ? sources : NO_SOURCES, isNull ? null : length, base + tab + 1));
      }
      carried = buf.copy(buf, 0, start, filled);
      base += start;
    }
  } catch (err) {
    source.close();
    console.error(`taskyard: the task index file is not usable (${(err as Error).message}); reading every record instead`);
    return { records: [], source: undefined };
  }
  return { records, source };
}
