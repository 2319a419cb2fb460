import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { Table as WasmTable, writeParquet, WriterPropertiesBuilder } from 'parquet-wasm';

/** A CSV of `rows` data rows (about 40 bytes each) plus a header, written in large blocks. */
export async function writeCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path, { highWaterMark: 4 * 1024 * 1024 });
  out.write('id,name,value,note\n');
  const block = 50_000;
  for (let start = 0; start < rows; start += block) {
    let text = '';
    for (let i = start; i < Math.min(rows, start + block); i++) text += `${i},name-${i},${(i * 0.25).toFixed(2)},"note ${i % 97}"\n`;
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** A Parquet file of `rows` rows in row groups of `groupSize` rows. */
export async function writeParquetFile(path: string, rows: number, groupSize: number): Promise<void> {
  const table = tableFromArrays({
    id: Int32Array.from({ length: rows }, (_, i) => i),
    value: Float64Array.from({ length: rows }, (_, i) => i * 0.25),
    name: Array.from({ length: rows }, (_, i) => `name-${i % 1000}`),
  });
  const props = new WriterPropertiesBuilder().setMaxRowGroupSize(groupSize).build();
  await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream')), props));
}

/** A text file of `bytes` bytes: 1 MiB of real lines, then a sparse hole (fast to make, same size to the reader). */
export async function writeBigText(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w');
  const line = 'the quick brown fox jumps over the lazy dog — ünïcödé line\n';
  await file.write(line.repeat(Math.ceil((1024 * 1024) / Buffer.byteLength(line))));
  await file.truncate(bytes);
  await file.close();
}
