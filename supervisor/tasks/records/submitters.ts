import { readFile, rename, writeFile } from 'node:fs/promises';
import { JsonLinesFile } from '../../common/json-lines-file.js';
import type { TaskIndex } from './task-index.js';
import type { TaskRecord } from './task-record.js';

interface Submitted {
  readonly run: string;
  readonly token: string;
}

/**
 * Which token submitted each Task run, kept beside the records without adding a field to the
 * spec's TaskStatus: one JSON line `{task_id, run_id, token}` per submit in the service's private
 * state directory (a Task cannot rewrite it through its own directory), held in memory. At start
 * the lines of runs no longer in the workspace are dropped, so the file follows the Tasks there.
 */
export class Submitters {
  readonly #byTask = new Map<string, Submitted>();
  #file: JsonLinesFile | undefined;

  constructor(private readonly path: string) {}

  /** Reads the file, keeps what the index still holds, and opens it for appending. */
  async start(index: TaskIndex): Promise<void> {
    const text = await readFile(this.path, 'utf8').catch(() => '');
    let lines = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      lines++;
      try {
        const { task_id: id, run_id: run, token } = JSON.parse(line) as Record<string, unknown>;
        if (typeof id === 'string' && typeof run === 'string' && typeof token === 'string' && index.get(id)?.status?.run_id === run) this.#byTask.set(id, { run, token });
      } catch {
        // A torn last line (a crash mid-write) is skipped.
      }
    }
    if (lines > this.#byTask.size) {
      const kept = [...this.#byTask].map(([task_id, { run, token }]) => `${JSON.stringify({ task_id, run_id: run, token })}\n`).join('');
      await writeFile(`${this.path}.tmp`, kept, { mode: 0o600 });
      await rename(`${this.path}.tmp`, this.path);
    }
    this.#file = await JsonLinesFile.open(this.path);
  }

  /** Notes who submitted a run (called by submit; the line is written after the call). */
  record(taskId: string, runId: string, token: string): void {
    this.#byTask.set(taskId, { run: runId, token });
    this.#file?.append({ task_id: taskId, run_id: runId, token });
  }

  /** The token name that submitted the record's current run, if known. */
  of(record: TaskRecord): string | undefined {
    const known = this.#byTask.get(record.id);
    return known && known.run === record.status?.run_id ? known.token : undefined;
  }

  async close(): Promise<void> {
    await this.#file?.close();
  }
}
