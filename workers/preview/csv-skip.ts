import type { FileHandle } from 'node:fs/promises';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const CHUNK = 1024 * 1024;

/** Scanner states; a quote only opens a quoted field at the start of a field (as csv-parse reads it). */
const STATE = { fieldStart: 0, unquoted: 1, quoted: 2, quoteInQuoted: 3 } as const;
type State = (typeof STATE)[keyof typeof STATE];

/**
 * Byte offset just after the first `count` records (header included), or the file size when it
 * has fewer. A record ends at a line feed outside quotes; empty lines are not records (csv-parse
 * `skip_empty_lines`). Scanning bytes this way is much cheaper than parsing rows nobody will see,
 * so a window deep in a large file costs one read pass instead of a full parse. A leading BOM
 * needs no care: it is neither a quote nor a line feed.
 */
export async function skipRecords(handle: FileHandle, count: number, delimiter: string, signal: AbortSignal): Promise<number> {
  const delim = delimiter.charCodeAt(0);
  const buffer = Buffer.allocUnsafe(CHUNK);
  let state: State = STATE.fieldStart;
  let hasContent = false;
  let records = 0;
  let position = 0;
  if (count === 0) return 0;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) return position;
    for (let i = 0; i < bytesRead; i++) {
      const b = buffer[i]!;
      if (state === STATE.quoted) {
        if (b === QUOTE) state = STATE.quoteInQuoted;
        continue;
      }
      if (state === STATE.quoteInQuoted) {
        // `""` is an escaped quote; anything else closed the field and is read as unquoted.
        state = STATE.unquoted;
        if (b === QUOTE) {
          state = STATE.quoted;
          continue;
        }
      }
      if (b === LF) {
        if (hasContent && ++records === count) return position + i + 1;
        hasContent = false;
        state = STATE.fieldStart;
      } else if (b !== CR) {
        hasContent = true;
        if (b === delim) state = STATE.fieldStart;
        else if (b === QUOTE && state === STATE.fieldStart) state = STATE.quoted;
        else state = STATE.unquoted;
      }
    }
    position += bytesRead;
  }
}
