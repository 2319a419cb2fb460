import type { ResultCache } from './cache/result-cache.js';
import type { Submitters } from './records/submitters.js';
import type { TaskRecord } from './records/task-record.js';

/**
 * An answer's metadata about a Task's current run (TaskStatus has no such fields, SPEC.md): the
 * token that submitted it, and the Task it was answered from when it is a result cache hit.
 */
export type RunFacts = { submitted_by?: string; cached_from?: string };

/** query_task_statuses' metadata: the same facts for each Task of a page that has them, by ID (`cached_from` only when a hit is shown). */
export type PageFacts = { submitted_by: Record<string, string>; cached_from?: Record<string, string> };

/** Reads the facts of runs from where they are kept (submitters.jsonl, the result cache's store). */
export class RunFactsReader {
  constructor(
    private readonly submitters: Pick<Submitters, 'of'>,
    private readonly cache: Pick<ResultCache, 'cachedFrom'>,
  ) {}

  of(record: TaskRecord): RunFacts {
    const token = this.submitters.of(record);
    const source = this.cache.cachedFrom(record);
    return { ...(token !== undefined && { submitted_by: token }), ...(source !== undefined && { cached_from: source }) };
  }

  ofPage(records: readonly TaskRecord[]): PageFacts {
    const submittedBy: Record<string, string> = {};
    const cachedFrom: Record<string, string> = {};
    let hit = false;
    for (const record of records) {
      const { submitted_by: token, cached_from: source } = this.of(record);
      if (token !== undefined) submittedBy[record.id] = token;
      if (source === undefined) continue;
      cachedFrom[record.id] = source;
      hit = true;
    }
    return { submitted_by: submittedBy, ...(hit && { cached_from: cachedFrom }) };
  }
}
