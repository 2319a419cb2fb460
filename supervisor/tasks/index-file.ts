import { fstatSync, openSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import type { TaskState } from '../../schemas/tasks.js';
import type { TaskRecord } from './task-index.js';
import { IndexSource, StoredRecord, type RecordHome } from './stored-record.js';

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
const NO_SOURCES: readonly string[] = Object.freeze([]);

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
