import { TASK_FILES } from '../../core/task-record/record-files.js';
import { KeyError } from '../../core/errors.js';
import { Lineage } from './graph.js';
import { relativeTaskPath } from './records/task-ids.js';
import type { RunFacts, RunFactsReader } from './run-facts.js';
import type { TaskIndex } from './records/task-index.js';

/** get_task_context's answer: its JSON bytes, made on each pass, and facts about its run (who submitted it, a cache hit's source). */
export interface TaskContext {
  pieces(): Iterable<Uint8Array>;
  readonly facts: RunFacts;
}

/** The lineage of a Task that is known (an unknown ID is the spec's KeyError). */
export function lineageOf(index: TaskIndex, id: string): Lineage {
  if (!index.get(id)) throw new KeyError(`Unknown task ${id}`);
  return Lineage.of(index, id);
}

/**
 * A Task with its status, metadata and log locations, lineage graph and relations. The fields are
 * written as text, from the cached texts of the status and of the graph's nodes.
 */
export function contextOf(index: TaskIndex, facts: Pick<RunFactsReader, 'of'>, id: string): TaskContext {
  const record = index.get(id);
  if (!record?.status) throw new KeyError(record ? `task ${id} has metadata but no status record` : `Unknown task ${id}`);
  const lineage = Lineage.of(index, id);
  const metadataPath = relativeTaskPath(record.parts, id, TASK_FILES.metadata);
  const logPath = record.status.log_path || null;
  const head =
    `{"task_id":${JSON.stringify(id)},"status":${index.statusJson(record.status).json},"metadata_exists":${record.hasMetadata},` +
    `"metadata_path":${JSON.stringify(metadataPath)},"log_path":${JSON.stringify(logPath)},"graph":`;
  const tail = `,"relations":${lineage.relationsJson}}`;
  return { pieces: () => lineage.pieces(head, tail), facts: facts.of(record) };
}
