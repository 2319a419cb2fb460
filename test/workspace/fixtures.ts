import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { Table as WasmTable, writeParquet, WriterPropertiesBuilder } from 'parquet-wasm';

/** Writes `content` at `root/relative`, creating parent directories. */
export async function put(root: string, relative: string, content: string | Uint8Array): Promise<string> {
  const path = join(root, relative);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  return path;
}

/**
 * A Parquet file of `rows` rows in row groups of `groupSize`: `id` (int32, row number), `name`
 * (nullable, dictionary-encoded string, null every 7th row), `big` (int64), `score` (float64).
 */
export async function writeParquetFixture(path: string, rows: number, groupSize: number): Promise<void> {
  const table = tableFromArrays({
    id: Int32Array.from({ length: rows }, (_, i) => i),
    name: Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : `name-${i}`)),
    big: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i) * 1_000_000_000_000n),
    score: Float64Array.from({ length: rows }, (_, i) => i / 4),
  });
  const props = new WriterPropertiesBuilder().setMaxRowGroupSize(groupSize).build();
  const bytes = writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), props);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}

/**
 * A fingerprint of a directory tree (names, sizes, mtimes, contents of small files) used to
 * assert that an attack changed nothing there; the paths in `skip` are left out.
 */
export async function snapshotTree(root: string, skip: readonly string[] = []): Promise<string> {
  const lines: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(dir, entry.name);
      if (skip.includes(full)) continue;
      const info = await stat(full);
      lines.push(`${full} ${entry.isDirectory() ? 'd' : info.size} ${info.mtimeMs}`);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) lines.push((await readFile(full)).toString('base64'));
    }
  }
  await walk(root);
  return lines.join('\n');
}
