import { closeSync, readSync } from 'node:fs';
import type { TaskLogChunk } from '../../../schemas/tasks.js';
import { isUtf8Continuation, utf8SafeLength } from '../../../core/utf8-cut.js';
import { openTaskFile, openTaskFileSync } from '../records/task-file.js';

/** Which bytes a window read at `offset` takes from a log of `size` bytes. */
interface WindowRead {
  readonly reset: boolean;
  readonly start: number;
  /** Up to 3 extra bytes, so a start inside a character can move to the next one. */
  readonly want: number;
}

function planRead(offset: number, size: number, limit: number): WindowRead {
  const reset = offset > size;
  const start = offset < 0 ? Math.max(0, size - limit) : reset ? 0 : offset;
  return { reset, start, want: Math.max(0, Math.min(size - start, limit + 3)) };
}

/** The fields of a window but its text. */
type WindowFields = Omit<TaskLogChunk, 'content'>;

/** The window of the bytes read (`view`, from `plan.start`), cut on character boundaries: its bytes and its other fields. */
function cutWindow(view: Buffer, plan: WindowRead, size: number, limit: number): { bytes: Buffer; fields: WindowFields } {
  let start = plan.start;
  let skip = 0;
  while (skip < Math.min(3, view.length) && isUtf8Continuation(view[skip]!)) skip++;
  start += skip;
  view = view.subarray(skip, skip + limit);
  view = view.subarray(0, utf8SafeLength(view));
  const next = start + view.length;
  return { bytes: view, fields: { start_offset: start, next_offset: next, file_size: size, has_more_before: start > 0, has_more_after: next < size, reset: plan.reset } };
}

function windowOf(view: Buffer, plan: WindowRead, size: number, limit: number): TaskLogChunk {
  const { bytes, fields } = cutWindow(view, plan, size, limit);
  return { content: bytes.toString('utf8'), ...fields };
}

/**
 * A window whose `content` is decoded from its bytes at each read and never kept. A live log's
 * windows are kept for sharing (live-task.ts), and as strings on the heap they made each young-
 * generation collection copy megabytes of them: with 20 followers of a big log, a collection every
 * few windows took 15 ms on average (bench/memory.ts), against 2.4 ms where only bytes are kept.
 */
function textOnRead(bytes: Buffer, fields: WindowFields): TaskLogChunk {
  return Object.defineProperty({ content: '', ...fields }, 'content', { enumerable: true, get: () => bytes.toString('utf8') });
}

const missing = (offset: number): TaskLogChunk => ({ content: '', start_offset: 0, next_offset: 0, file_size: 0, has_more_before: false, has_more_after: false, reset: offset > 0 });

/**
 * Reads a window of a log by byte offsets without splitting a UTF-8 character: the start moves
 * forward past continuation bytes, the end stops before a character the window (or the file, while
 * a writer is mid-character) does not finish. `offset` -1 reads the tail; an offset past the end
 * means the log was reset (replaced or truncated): the answer starts at 0 with `reset` set.
 * A missing log reads as empty; one that is not a regular file is refused (PermissionError).
 */
export async function readLogWindow(file: string, offset: number, limit: number): Promise<TaskLogChunk> {
  const opened = await openTaskFile(file);
  if (!opened) return missing(offset);
  const { handle, stat: { size } } = opened;
  try {
    const plan = planRead(offset, size, limit);
    const buf = Buffer.alloc(plan.want);
    const { bytesRead } = plan.want > 0 ? await handle.read(buf, 0, plan.want, plan.start) : { bytesRead: 0 };
    return windowOf(buf.subarray(0, bytesRead), plan, size, limit);
  } finally {
    await handle.close();
  }
}

/**
 * `readLogWindow`, synchronous, with its text kept as bytes (see textOnRead): for a live Task's
 * log, whose new bytes are in the page cache (its runner just wrote them), a window costs a few
 * microseconds this way, against four thread-pool round trips, each waiting for a core, on the way
 * from a change to every follower.
 */
export function readLogWindowSync(file: string, offset: number, limit: number): TaskLogChunk {
  const opened = openTaskFileSync(file);
  if (!opened) return missing(offset);
  const { fd, stat: { size } } = opened;
  try {
    const plan = planRead(offset, size, limit);
    // Read into the window's own buffer, off the heap, where collections do not move it.
    const buf = Buffer.allocUnsafe(plan.want);
    const bytesRead = plan.want > 0 ? readSync(fd, buf, 0, plan.want, plan.start) : 0;
    const { bytes, fields } = cutWindow(buf.subarray(0, bytesRead), plan, size, limit);
    return textOnRead(bytes, fields);
  } finally {
    closeSync(fd);
  }
}
