import type { TaskLogChunk } from '../../schemas/tasks.js';
import { isUtf8Continuation, utf8SafeLength } from '../../core/utf8-cut.js';
import { openTaskFile } from './task-file.js';

/**
 * Reads a window of a log by byte offsets without splitting a UTF-8 character: the start moves
 * forward past continuation bytes, the end stops before a character the window (or the file, while
 * a writer is mid-character) does not finish. `offset` -1 reads the tail; an offset past the end
 * means the log was reset (replaced or truncated): the answer starts at 0 with `reset` set.
 * A missing log reads as empty; one that is not a regular file is refused (PermissionError).
 */
export async function readLogWindow(file: string, offset: number, limit: number): Promise<TaskLogChunk> {
  const opened = await openTaskFile(file);
  if (!opened) {
    return { content: '', start_offset: 0, next_offset: 0, file_size: 0, has_more_before: false, has_more_after: false, reset: offset > 0 };
  }
  const { handle, stat: { size } } = opened;
  try {
    const reset = offset > size;
    let start = offset < 0 ? Math.max(0, size - limit) : reset ? 0 : offset;
    // Read up to 3 extra bytes so a start inside a character can move to the next one.
    const want = Math.min(size - start, limit + 3);
    const buf = Buffer.alloc(Math.max(0, want));
    const { bytesRead } = want > 0 ? await handle.read(buf, 0, want, start) : { bytesRead: 0 };
    let view = buf.subarray(0, bytesRead);
    let skip = 0;
    while (skip < Math.min(3, view.length) && isUtf8Continuation(view[skip]!)) skip++;
    start += skip;
    view = view.subarray(skip, skip + limit);
    view = view.subarray(0, utf8SafeLength(view));
    const next = start + view.length;
    return {
      content: view.toString('utf8'),
      start_offset: start,
      next_offset: next,
      file_size: size,
      has_more_before: start > 0,
      has_more_after: next < size,
      reset,
    };
  } finally {
    await handle.close();
  }
}
