import { constants, unlinkSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { TaskState } from '../../../schemas/tasks.js';
import type { TaskRecord } from './task-record.js';
import { IndexSource, StoredRecord, type RecordHome } from './stored-record.js';
import { openRegularFileWithStatSync, UnsafeFileError } from '../../../workers/safe-file.js';
import { PrivateStateError } from '../../common/private-state.js';

/**
 * The index file: every record the index held, one line each, in listing order, written
 * atomically into the service's private directory when the index is complete and when the
 * service stops. A start reads its short heads only; each status stays in the file, read when
 * asked for (a listing reads whole runs of lines at once, since they are in its order). Task
 * directories whose identity or mtime (`stamp`) differs are read from disk again: every record
 * write is a rename inside its directory, so a record changed while the service was down
 * changes that stamp.
 *
 * A line: the CRC-32 of the rest of the line (8 hex digits), a tab, `[id, ino, mtimeMs, state,
 * hasMetadata, createdAt, sources]` as JSON, a tab, the status JSON (or `null`). A line whose
 * checksum or head does not hold is skipped: its directory is read from disk like one the file
 * does not know, so a damaged byte costs a read, never a status that is not valid JSON. A record
 * the service wrote itself has no stamp (null) and is re-read at the next start. Files of older
 * versions (without checksums) are not used: every record is read once and the file rewritten.
 */
const VERSION_LINE = 'taskyard-task-index 4';
/** Lines per write: their statuses lie within one read of the previous file (MAX_SPAN). */
const WRITE_BATCH = 1000;
const READ_BLOCK = 4 << 20;
const NO_SOURCES: readonly string[] = Object.freeze([]);

/** Writes the index file from `records` (temp file, then rename); `textsOf` gives their status texts. */
export async function writeIndexFile(file: string, records: readonly TaskRecord[], textsOf: (batch: readonly TaskRecord[]) => Array<string | null>): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  // Created afresh, never through a link or into a FIFO left at that name.
  await rm(temp, { force: true });
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.write(`${VERSION_LINE}\n`);
    for (let i = 0; i < records.length; i += WRITE_BATCH) {
      const batch = records.slice(i, i + WRITE_BATCH);
      const texts = textsOf(batch);
      const lines = batch.map((r, n) => {
        const stamp = r.stamp;
        const line = `${JSON.stringify([r.id, stamp?.ino ?? null, stamp?.mtimeMs ?? null, r.state ?? null, r.hasMetadata, r.createdAt, r.sources])}\t${texts[n] ?? 'null'}`;
        return `${checksumOf(line)}\t${line}\n`;
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

/** The line's checksum as written: CRC-32, 8 lowercase hex digits. */
const checksumOf = (line: string | Buffer): string => crc32(line).toString(16).padStart(8, '0');
const CHECKSUM_CHARS = 8;

/** A head as written by writeIndexFile, or undefined (damaged, or not this version's). */
function headOf(json: string): Head | undefined {
  try {
    const head = JSON.parse(json) as unknown;
    if (!Array.isArray(head) || head.length !== 7) return undefined;
    const [id, ino, mtimeMs, state, hasMetadata, createdAt, sources] = head as unknown[];
    const ok = typeof id === 'string' && (ino === null || typeof ino === 'number') && (mtimeMs === null || typeof mtimeMs === 'number') && (state === null || typeof state === 'string') &&
      typeof hasMetadata === 'boolean' && (createdAt === null || typeof createdAt === 'string') && Array.isArray(sources) && sources.every((s) => typeof s === 'string');
    return ok ? (head as Head) : undefined;
  } catch {
    return undefined;
  }
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
  let opened: ReturnType<typeof openRegularFileWithStatSync>;
  try {
    opened = openRegularFileWithStatSync(file);
  } catch (err) {
    if (err instanceof UnsafeFileError) setAside(file, err);
    return { records, source: undefined };
  }
  const source = new IndexSource(opened.fd);
  const home: RecordHome = { workspace, source };
  let damaged = 0;
  try {
    const size = opened.stat.size;
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
          if (buf.toString('utf8', start, end) !== VERSION_LINE) throw new Error('an index file of another version');
          continue;
        }
        const lineStart = start + CHECKSUM_CHARS + 1;
        const tab = buf.indexOf(9, lineStart);
        if (buf[lineStart - 1] !== 9 || tab === -1 || tab > end || buf.toString('latin1', start, lineStart - 1) !== checksumOf(buf.subarray(lineStart, end))) {
          damaged++;
          continue;
        }
        const head = headOf(buf.toString('utf8', lineStart, tab));
        if (!head) {
          damaged++;
          continue;
        }
        const [id, ino, mtimeMs, state, hasMetadata, createdAt, sources] = head;
        if (ino === null || mtimeMs === null) continue; // written by the service without a stamp: read again
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
  if (damaged > 0) console.error(`taskyard: ${damaged} line(s) of the task index file ${file} are damaged; those records are read from their directories`);
  return { records, source };
}

/**
 * Something that is not a regular file where the index file belongs (a FIFO would have hung the
 * start): removed, so that the next write puts the file back; a directory is not removed for the
 * operator, and stops the start with a message naming it.
 */
function setAside(file: string, err: UnsafeFileError): void {
  if (err.kind === 'directory') throw new PrivateStateError(`the task index file ${file} is a directory; remove or move it away and start again`);
  unlinkSync(file);
  console.error(`taskyard: the task index file ${file} was a ${err.kind}, not a regular file; it was removed, every record is read and the file written again`);
}
