import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import type { TaskState, TaskStatus } from '../../schemas/tasks.js';
import type { TaskRecord } from './task-index.js';
import { parseTaskId, taskDirOf, type TaskIdParts } from './task-ids.js';

/**
 * The index file: every record the index held, one line each, in listing order, written
 * atomically into the service's private directory when the index is complete and when the
 * service stops. A start reads its short heads only; each status stays in the file, read when
 * asked for (a listing reads whole runs of lines at once, since they are in its order). Task
 * directories whose identity or mtime (`stamp`) differs are read from disk again: every record
 * write is a rename inside its directory, so a record changed while the service was down
 * changes that stamp.
 *
 * A line: `[id, stamp, state, hasMetadata, createdAt, sources]` as JSON, a tab, the status JSON
 * (or `null`). A record the service wrote itself has no stamp and is re-read at the next start.
 */
const VERSION_LINE = 'taskyard-task-index 2';
/** Lines per write: their statuses lie within one read of the previous file (MAX_SPAN). */
const WRITE_BATCH = 1000;
const READ_BLOCK = 4 << 20;
/** Largest run of a listing read from the file at once. */
const MAX_SPAN = 1 << 20;
const NO_SOURCES: readonly string[] = Object.freeze([]);

/** `ino:mtime` of a directory, as compared at start. */
export function stampOf(stats: { ino: number; mtimeMs: number }): string {
  return `${stats.ino}:${stats.mtimeMs}`;
}

/** An index file held open while records point into it (a newer file may have replaced its name). */
export class IndexSource {
  #fd: number | undefined;

  constructor(fd: number) {
    this.#fd = fd;
  }

  read(offset: number, length: number): Buffer {
    if (this.#fd === undefined) throw new Error('the task index file is closed (the service is stopping)');
    const buf = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.#fd, buf, done, length - done, offset + done);
      if (n === 0) throw new Error('the task index file is shorter than its records say');
      done += n;
    }
    return buf;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Where a stored status's JSON text is: in memory, or a byte range of an index file. */
export type StatusText = string | { readonly source: IndexSource; readonly offset: number; readonly length: number } | null;

/** A finished (or metadata-only) record: its status stays JSON text until someone reads it. */
export class StoredRecord implements TaskRecord {
  #status: TaskStatus | null | undefined;

  constructor(
    readonly workspace: string,
    readonly id: string,
    readonly parts: TaskIdParts,
    readonly stamp: string,
    readonly state: TaskState | undefined,
    readonly hasMetadata: boolean,
    readonly createdAt: string | null,
    readonly sources: readonly string[],
    readonly text: StatusText,
  ) {}

  get dir(): string {
    return taskDirOf(this.workspace, this.id, this.parts);
  }

  /** The status JSON text (null for a metadata-only directory). */
  json(): string | null {
    const text = this.text;
    return text === null || typeof text === 'string' ? text : text.source.read(text.offset, text.length).toString('utf8');
  }

  get status(): TaskStatus | null {
    if (this.#status === undefined) {
      const json = this.json();
      this.#status = json === null ? null : (JSON.parse(json) as TaskStatus);
    }
    return this.#status;
  }
}

/**
 * The status texts of `records` (null without a status): those in one index file close together
 * are read with one read; `other` answers the rest.
 */
export function statusTexts(records: readonly TaskRecord[], other: (record: TaskRecord) => string | null): Array<string | null> {
  let source: IndexSource | undefined;
  let lo = Infinity;
  let hi = 0;
  for (const r of records) {
    if (!(r instanceof StoredRecord) || r.text === null || typeof r.text === 'string') continue;
    source ??= r.text.source;
    if (r.text.source !== source) continue;
    lo = Math.min(lo, r.text.offset);
    hi = Math.max(hi, r.text.offset + r.text.length);
  }
  const span = source && hi - lo <= MAX_SPAN ? source.read(lo, hi - lo) : undefined;
  return records.map((r) => {
    if (span && r instanceof StoredRecord && r.text !== null && typeof r.text !== 'string' && r.text.source === source) {
      return span.toString('utf8', r.text.offset - lo, r.text.offset - lo + r.text.length);
    }
    return other(r);
  });
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
      const lines = batch.map((r, n) => `${JSON.stringify([r.id, r.stamp ?? '', r.state ?? null, r.hasMetadata, r.createdAt, r.sources])}\t${texts[n] ?? 'null'}\n`);
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

type Head = [string, string, TaskState | null, boolean, string | null, string[]];

/** The records of an index file by ID, with the file held open for their statuses (none when absent or unreadable). */
export function readIndexFile(file: string, workspace: string): { records: Map<string, StoredRecord>; source: IndexSource | undefined } {
  const records = new Map<string, StoredRecord>();
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { records, source: undefined };
  }
  const source = new IndexSource(fd);
  try {
    const size = fstatSync(fd).size;
    let carry: Buffer = Buffer.alloc(0);
    let base = 0; // file offset of carry[0]
    let first = true;
    for (let at = 0; at < size; ) {
      const block = source.read(at, Math.min(READ_BLOCK, size - at));
      at += block.length;
      const buf = carry.length ? Buffer.concat([carry, block]) : block;
      let start = 0;
      for (let end = buf.indexOf(10, start); end !== -1; start = end + 1, end = buf.indexOf(10, start)) {
        if (first) {
          first = false;
          if (buf.toString('utf8', start, end) !== VERSION_LINE) throw new Error('an index file of another version');
          continue;
        }
        const tab = buf.indexOf(9, start);
        const [id, stamp, state, hasMetadata, createdAt, sources] = JSON.parse(buf.toString('utf8', start, tab)) as Head;
        const parts = parseTaskId(id);
        if (!parts || !stamp) continue;
        const length = end - tab - 1;
        const text = length === 4 && buf[tab + 1] === 0x6e ? null : { source, offset: base + tab + 1, length };
        records.set(id, new StoredRecord(workspace, id, parts, stamp, state ?? undefined, hasMetadata, createdAt, sources.length ? sources : NO_SOURCES, text));
      }
      carry = buf.subarray(start);
      base += start;
    }
  } catch (err) {
    source.close();
    console.error(`taskyard: the task index file is not usable (${(err as Error).message}); reading every record instead`);
    return { records: new Map(), source: undefined };
  }
  return { records, source };
}
