import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { CsvPreview } from '../../schemas/workspace.js';
import { skipRecords } from './csv-scan.js';
import { PreviewFailure } from './preview-failure.js';

/** One record may not grow past this: an unclosed quote must not pull a whole file into memory. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;

export interface RowWindow {
  offset: number;
  limit: number;
}

/** Positional reads from `start`: the handle stays open and owned by the caller (a ReadStream's destroy would close it). */
async function* readChunks(handle: FileHandle, start: number): AsyncGenerator<Buffer> {
  for (let position = start; ; ) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield chunk.subarray(0, bytesRead);
  }
}

/**
 * Streams records from byte `start` through csv-parse, stopping (stream destroyed) after `max`
 * records, so memory follows the window, not the file.
 */
async function readRecords(handle: FileHandle, start: number, max: number, delimiter: string, signal: AbortSignal): Promise<string[][]> {
  const source = Readable.from(readChunks(handle, start));
  const parser = source.pipe(
    parse({ delimiter, bom: start === 0, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, max_record_size: MAX_RECORD_BYTES }),
  );
  const records: string[][] = [];
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (signal.aborted) throw new PreviewFailure('CancelledError', 'preview cancelled');
      records.push(record);
      if (records.length >= max) break;
    }
  } catch (err) {
    if (err instanceof PreviewFailure) throw err;
    throw new PreviewFailure('ValueError', `cannot parse CSV: ${(err as Error).message}`);
  } finally {
    parser.destroy();
    source.destroy();
  }
  return records;
}

/**
 * CSV preview: the first record names the columns; data rows `offset .. offset+limit` are
 * returned, plus whether more follow. Rows before the window are skipped by a byte scan
 * (`skipRecords`), the window itself is parsed by csv-parse.
 */
export async function previewCsv(handle: FileHandle, size: number, window: RowWindow, delimiter: string, signal: AbortSignal): Promise<CsvPreview> {
  const [columns = []] = await readRecords(handle, 0, 1, delimiter, signal);
  const start = await skipRecords(handle, window.offset + 1, delimiter, signal);
  const records = start >= size ? [] : await readRecords(handle, start, window.limit + 1, delimiter, signal);
  const rows = records.slice(0, window.limit);
  return { kind: 'csv', size, columns, rows, offset: window.offset, limit: window.limit, has_more: records.length > window.limit };
}
