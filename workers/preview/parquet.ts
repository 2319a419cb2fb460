import { openAsBlob } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import type { ParquetFile } from 'parquet-wasm';
import type { ParquetPreview } from '../../schemas/workspace.js';
import { describeColumns, tableRows } from './arrow-values.js';
import type { RowWindow } from './csv.js';
import { PreviewFailure } from './preview-failure.js';

type ParquetWasm = typeof import('parquet-wasm');
let loaded: Promise<ParquetWasm> | null = null;

/** parquet-wasm compiles its WebAssembly on import: load it in the threads that preview Parquet only. */
function loadParquetWasm(): Promise<ParquetWasm> {
  loaded ??= import('parquet-wasm');
  return loaded;
}

/** Indexes of the row groups overlapping `[from, to)`, and the first row of the first one. */
export function overlappingGroups(groupRows: readonly number[], from: number, to: number): { groups: number[]; firstRow: number } {
  const groups: number[] = [];
  let firstRow = 0;
  let start = 0;
  groupRows.forEach((rows, index) => {
    const end = start + rows;
    if (end > from && start < to) {
      if (groups.length === 0) firstRow = start;
      groups.push(index);
    }
    start = end;
  });
  return { groups, firstRow };
}

/**
 * Parquet preview: counts and schema come from the footer; only the row groups overlapping the
 * window are fetched (ParquetFile reads byte ranges of the Blob), so the cost follows the window.
 */
export async function previewParquet(path: string, size: number, window: RowWindow): Promise<ParquetPreview> {
  const pw = await loadParquetWasm();
  let file: ParquetFile;
  try {
    file = await pw.ParquetFile.fromFile(await openAsBlob(path));
  } catch (err) {
    throw new PreviewFailure('ValueError', `cannot read Parquet file: ${String((err as Error).message ?? err)}`);
  }
  try {
    const meta = file.metadata();
    const row_count = meta.fileMetadata().numRows();
    const groupRows = meta.rowGroups().map((g) => g.numRows());
    const schema = tableFromIPC(file.schema().intoIPCStream()).schema;
    const { groups, firstRow } = overlappingGroups(groupRows, window.offset, window.offset + window.limit);
    let rows: unknown[][] = [];
    if (groups.length > 0) {
      const batch = await file.read({ rowGroups: groups, offset: window.offset - firstRow, limit: window.limit });
      rows = tableRows(tableFromIPC(batch.intoIPCStream()));
    }
    return {
      kind: 'parquet',
      size,
      columns: schema.fields.map((f) => f.name),
      rows,
      offset: window.offset,
      limit: window.limit,
      has_more: window.offset + rows.length < row_count,
      column_schema: describeColumns(schema),
      row_count,
      row_group_count: groupRows.length,
    };
  } catch (err) {
    if (err instanceof PreviewFailure) throw err;
    throw new PreviewFailure('ValueError', `cannot read Parquet file: ${String((err as Error).message ?? err)}`);
  } finally {
    file.free();
  }
}
