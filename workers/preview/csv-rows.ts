import { basename } from 'node:path';
import type { CsvRowCount } from '../../schemas/csv-rows.js';
import { scanRecords } from './csv-scan.js';
import { openInside } from './open-file.js';
import { outcomeOf, PreviewFailure, type PoolOutcome } from './preview-failure.js';
import { csvDelimiterOf, previewKindOf } from './preview-kind.js';

/** What the supervisor sends to a pool thread to count rows: a path it already resolved inside `root`. */
export interface CsvRowsRequest {
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the file (symbolic links resolved, inside `root`). */
  real: string;
  /** The workspace-relative path, for messages and the answer. */
  path: string;
  maxBytes: number;
  maxMs: number;
}

/** A count or a business failure as data (error classes do not survive the thread boundary). */
export type CsvRowsOutcome = PoolOutcome<CsvRowCount>;

async function countRows(req: CsvRowsRequest, signal: AbortSignal): Promise<CsvRowCount> {
  const name = basename(req.path);
  if (previewKindOf(name) !== 'csv') throw new PreviewFailure('ValueError', `not a CSV file: ${req.path} (rows are counted in .csv and .tsv files)`);
  const file = await openInside(req.root, req.real, req.path);
  try {
    const scan = await scanRecords(file.handle, { bytes: req.maxBytes, deadline: Date.now() + req.maxMs }, csvDelimiterOf(name), signal);
    // The first record names the columns (as preview_file reads it): it is not a row.
    return { path: req.path, size: file.size, rows: Math.max(0, scan.records - 1), exact: scan.complete, scanned_bytes: scan.position };
  } finally {
    await file.handle.close();
  }
}

/** Pool handler of `csv-rows`: never throws for business failures. */
export function runCsvRows(req: CsvRowsRequest, signal: AbortSignal): Promise<CsvRowsOutcome> {
  return outcomeOf(countRows(req, signal));
}
