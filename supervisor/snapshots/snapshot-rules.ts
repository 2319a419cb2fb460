import { ValueError } from '../../core/errors.js';
import { parseTaskId } from '../tasks/records/task-ids.js';

/** Bounds of one snapshot archive; anything beyond is refused before the workspace is touched. */
export const SNAPSHOT_LIMITS = Object.freeze({
  /** Archive members (files and directories together). */
  members: 20_000,
  /** Sum of the declared sizes of every file once expanded. */
  expandedBytes: 4 * 1024 * 1024 * 1024,
  /** Task directories one archive may carry. */
  tasks: 1_000,
});

/** At most this many Task IDs in `deletions` (like `delete_entries`). */
export const MAX_DELETIONS = 200;

/** One archive member placed in a Task directory. */
export interface Member {
  readonly taskType: string;
  readonly taskId: string;
  /** Path below the Task directory, `/`-separated; '' for the Task directory itself. */
  readonly inner: string;
  readonly kind: 'file' | 'directory';
}

/** The member's name as a list of plain segments: no absolute, escaping or odd names. */
function segmentsOf(name: string): string[] {
  if (name.includes('\0')) throw new ValueError(`archive member name contains a NUL byte: ${JSON.stringify(name)}`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new ValueError(`archive member has an absolute name: ${name}`);
  if (name.includes('\\')) throw new ValueError(`archive member name contains a backslash: ${name}`);
  const segments = name.replace(/^(\.\/)+/, '').replace(/\/+$/, '').split('/');
  for (const s of segments) {
    if (s === '..') throw new ValueError(`archive member escapes its directory: ${name}`);
    if (s === '' || s === '.') throw new ValueError(`archive member has an empty or "." path segment: ${name}`);
  }
  return segments;
}

/**
 * Where a tar member belongs: `<task_type>/<task_id>/...` with a valid Task ID whose type is the
 * directory it sits in. Only regular files and directories are accepted: links and devices could
 * point anywhere once written.
 */
export function classifyMember(name: string, type: string): Member | null {
  if (type === 'Directory' && /^(\.\/?)?$/.test(name)) return null; // the archive's own root
  const kind = type === 'File' || type === 'OldFile' || type === 'ContiguousFile' ? 'file' : type === 'Directory' ? 'directory' : null;
  if (!kind) throw new ValueError(`archive member ${name} is a ${type}; only regular files and directories are accepted`);
  const segments = segmentsOf(name);
  const [taskType, taskId, ...rest] = segments;
  if (segments.length === 1 && kind === 'directory') return null; // `<task_type>/` on its own
  if (!taskType || !taskId) throw new ValueError(`archive member ${name} is not inside a <task_type>/<task_id>/ directory`);
  const parts = parseTaskId(taskId);
  if (!parts) throw new ValueError(`archive directory ${taskType}/${taskId} is not named after a valid Task ID`);
  if (parts.type !== taskType) throw new ValueError(`archive directory ${taskType}/${taskId} holds a Task of type ${parts.type}`);
  if (kind === 'file' && rest.length === 0) throw new ValueError(`archive member ${name} must be a directory`);
  return { taskType, taskId, inner: rest.join('/'), kind };
}
