import { createReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { TaskState, TaskStatus } from '../../schemas/tasks.js';
import type { TaskRecord } from './task-index.js';
import { parseTaskId, type TaskIdParts } from './task-ids.js';

/**
 * The index file: every record the index held, one line each, written atomically into the
 * service's private directory when the index is complete and when the service stops. A start
 * reads it instead of every record, and re-reads from disk only the Task directories whose
 * identity or mtime (`stamp`) differs: every record write is a rename inside its directory, so a
 * record changed while the service was down changes that stamp.
 *
 * A line: `[id, stamp, state, hasMetadata, createdAt, sources]` as JSON, a tab, the status JSON
 * (or `null`). A record the service wrote itself has no stamp and is re-read at the next start.
 */
const VERSION_LINE = 'taskyard-task-index 1';
const BATCH = 2000;

/** `ino:mtime` of a directory, as compared at start. */
export function stampOf(stats: { ino: number; mtimeMs: number }): string {
  return `${stats.ino}:${stats.mtimeMs}`;
}

/** A record as the index file holds it: its status stays JSON text until someone reads it. */
export class StoredRecord implements TaskRecord {
  #status: TaskStatus | null | undefined;

  constructor(
    readonly id: string,
    readonly parts: TaskIdParts,
    readonly dir: string,
    readonly stamp: string,
    readonly state: TaskState | undefined,
    readonly hasMetadata: boolean,
    readonly createdAt: string | null,
    readonly sources: readonly string[],
    /** The status JSON text, or null for a metadata-only directory. */
    readonly json: string | null,
  ) {}

  get status(): TaskStatus | null {
    if (this.#status === undefined) this.#status = this.json === null ? null : (JSON.parse(this.json) as TaskStatus);
    return this.#status;
  }
}

/** Writes the index file from `records` (temp file, then rename); `jsonOf` gives a status's text. */
export async function writeIndexFile(file: string, records: readonly TaskRecord[], jsonOf: (record: TaskRecord) => string | null): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.write(`${VERSION_LINE}\n`);
    for (let i = 0; i < records.length; i += BATCH) {
      const lines: string[] = [];
      for (const r of records.slice(i, i + BATCH)) {
        lines.push(`${JSON.stringify([r.id, r.stamp ?? '', r.state ?? null, r.hasMetadata, r.createdAt, r.sources])}\t${jsonOf(r) ?? 'null'}\n`);
      }
      await handle.write(lines.join(''));
    }
    await handle.close();
    await rename(temp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

type Header = [string, string, TaskState | null, boolean, string | null, string[]];

/** The records of an index file by ID (empty when the file is absent or of another version). */
export async function readIndexFile(file: string, dirOf: (id: string, parts: TaskIdParts) => string): Promise<Map<string, StoredRecord>> {
  const records = new Map<string, StoredRecord>();
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let first = true;
  try {
    for await (const line of lines) {
      if (first) {
        first = false;
        if (line !== VERSION_LINE) return records;
        continue;
      }
      const tab = line.indexOf('\t');
      const [id, stamp, state, hasMetadata, createdAt, sources] = JSON.parse(line.slice(0, tab)) as Header;
      const parts = parseTaskId(id);
      if (!parts || !stamp) continue;
      const json = line.slice(tab + 1);
      records.set(id, new StoredRecord(id, parts, dirOf(id, parts), stamp, state ?? undefined, hasMetadata, createdAt, sources, json === 'null' ? null : json));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return records;
    console.error('taskyard: the task index file is unreadable; reading every record instead', err);
    return new Map();
  }
  return records;
}
