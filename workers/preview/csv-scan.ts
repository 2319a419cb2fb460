import type { FileHandle } from 'node:fs/promises';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const CHUNK = 1024 * 1024;

/** Scanner states; a quote only opens a quoted field at the start of a field (as csv-parse reads it). */
const STATE = { fieldStart: 0, unquoted: 1, quoted: 2, quoteInQuoted: 3 } as const;
type State = (typeof STATE)[keyof typeof STATE];

/** Where a scan stops at the latest: after `records` records, `bytes` bytes, or at `deadline` (ms since the epoch). */
export interface ScanBounds {
  records?: number;
  bytes?: number;
  deadline?: number;
}

/** How far a scan went: records seen, the byte offset after the last one, and whether it reached the end of the file. */
export interface ScanResult {
  records: number;
  position: number;
  complete: boolean;
}

/**
 * Counts records from the start of the file with a byte scanner, stopping at the first bound
 * reached. A record ends at a line feed outside quotes; empty lines are not records (csv-parse
 * `skip_empty_lines`), and a last record without a line feed counts once the end is reached.
 * Scanning bytes this way is much cheaper than parsing rows nobody will see. A leading BOM needs
 * no care: it is neither a quote nor a line feed. `position` is the offset just after the last
 * record counted (the file size at the end).
 */
export async function scanRecords(handle: FileHandle, bounds: ScanBounds, delimiter: string, signal: AbortSignal): Promise<ScanResult> {
  const delim = delimiter.charCodeAt(0);
  const maxRecords = bounds.records ?? Infinity;
  const buffer = Buffer.allocUnsafe(CHUNK);
  let state: State = STATE.fieldStart;
  let hasContent = false;
  let records = 0;
  let position = 0;
  if (maxRecords === 0) return { records, position, complete: false };
  for (;;) {
    if (signal.aborted) throw signal.reason;
    if (position >= (bounds.bytes ?? Infinity) || Date.now() >= (bounds.deadline ?? Infinity)) return { records, position, complete: false };
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) return { records: hasContent ? records + 1 : records, position, complete: true };
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
        if (hasContent && ++records === maxRecords) return { records, position: position + i + 1, complete: false };
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

/**
 * Byte offset just after the first `count` records (header included), or the file size when it
 * has fewer: a window deep in a large file costs one read pass instead of a full parse.
 */
export async function skipRecords(handle: FileHandle, count: number, delimiter: string, signal: AbortSignal): Promise<number> {
  return (await scanRecords(handle, { records: count }, delimiter, signal)).position;
}
