import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Bounds of `count_csv_rows`: a count is a glance, so it stops at these and says so (`exact: false`). */
export const CSV_ROWS_LIMITS = Object.freeze({
  /** Bytes scanned by default, and the range a caller may ask for. */
  defaultBytes: 1024 * 1024 * 1024,
  minBytes: 1024 * 1024,
  maxBytes: 16 * 1024 * 1024 * 1024,
  /** Seconds one count scans at most, whatever the bytes bound. */
  seconds: 10,
});

/** Input of `count_csv_rows` (beyond the spec). */
export const CountCsvRowsInput = Type.Object(
  {
    path: Type.String({ description: 'A .csv or .tsv file relative to the workspace' }),
    max_bytes: Type.Optional(
      Type.Integer({
        minimum: CSV_ROWS_LIMITS.minBytes,
        maximum: CSV_ROWS_LIMITS.maxBytes,
        default: CSV_ROWS_LIMITS.defaultBytes,
        description: 'Bytes to scan at most; past them the count is a lower bound (exact false)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CountCsvRowsInput = Static<typeof CountCsvRowsInput>;

/** Answer of `count_csv_rows`: data rows as `preview_file` pages them (header and empty lines not counted). */
export const CsvRowCount = Type.Object({
  path: Type.String({ description: 'Workspace-relative path' }),
  size: Type.Integer({ minimum: 0, description: 'File size in bytes' }),
  rows: Type.Integer({ minimum: 0, description: 'Data rows: all of them when exact, else at least this many' }),
  exact: Type.Boolean({ description: 'False when the scan stopped at max_bytes or the time bound before the end' }),
  scanned_bytes: Type.Integer({ minimum: 0, description: 'Bytes scanned' }),
});
export type CsvRowCount = Static<typeof CsvRowCount>;
