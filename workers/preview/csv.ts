import type { FileHandle } from 'node:fs/promises';
import { parse } from 'csv-parse';
import type { CsvPreview } from '../../schemas/workspace.js';
import { PreviewFailure } from './preview-failure.js';

/** One record may not grow past this: an unclosed quote must not pull a whole file into memory. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;

export interface RowWindow {
  offset: number;
  limit: number;
}

/**
 * CSV preview: the first record names the columns; data rows `offset .. offset+limit` are
 * returned. Records stream through csv-parse and the read stops (stream destroyed) right after
 * the window, so memory follows the window, not the file.
 */
export async function previewCsv(handle: FileHandle, size: number, window: RowWindow, delimiter: string, signal: AbortSignal): Promise<CsvPreview> {
  const source = handle.createReadStream({ start: 0, highWaterMark: 256 * 1024, autoClose: false });
  const parser = source.pipe(
    parse({ delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, max_record_size: MAX_RECORD_BYTES }),
  );
  let columns: string[] | null = null;
  const rows: string[][] = [];
  let index = 0;
  let has_more = false;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (signal.aborted) throw new PreviewFailure('CancelledError', 'preview cancelled');
      if (columns === null) {
        columns = record;
        continue;
      }
      if (index >= window.offset + window.limit) {
        has_more = true;
        break;
      }
      if (index >= window.offset) rows.push(record);
      index++;
    }
  } catch (err) {
    if (err instanceof PreviewFailure) throw err;
    throw new PreviewFailure('ValueError', `cannot parse CSV: ${(err as Error).message}`);
  } finally {
    parser.destroy();
    source.destroy();
  }
  return { kind: 'csv', size, columns: columns ?? [], rows, offset: window.offset, limit: window.limit, has_more };
}
