import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { REGISTRATION_NAME, TASK_NAME, TASK_TYPE } from '../../../core/task-record/id-rules.js';
import { ValueError } from '../../../core/errors.js';

/** A whole Task ID: the three part patterns joined by '#'. */
const TASK_ID = new RegExp(`^${[TASK_TYPE, REGISTRATION_NAME, TASK_NAME].map((re) => re.source.slice(1, -1)).join('#')}$`);

/** The three parts of a Task ID. */
export interface TaskIdParts {
  type: string;
  registration: string;
  name: string;
}

/** Splits `<task_type>#<registration_name>#<task_name>`; null for anything else. */
export function parseTaskId(id: string): TaskIdParts | null {
  const parts = id.split('#');
  if (parts.length !== 3) return null;
  const [type, registration, name] = parts as [string, string, string];
  if (!TASK_TYPE.test(type) || !REGISTRATION_NAME.test(registration) || !TASK_NAME.test(name)) return null;
  return { type, registration, name };
}

/** `parseTaskId(id)?.type === type` in one regex test, without building the parts (a start checks every directory name). */
export function isTaskIdOfType(id: string, type: string): boolean {
  return id.length > type.length + 1 && id.startsWith(type) && id.charCodeAt(type.length) === 0x23 && TASK_ID.test(id);
}

/** The parts of an ID already known to be valid (no checks: records keep the ID only). */
export function partsOf(id: string): TaskIdParts {
  const [type, registration, name] = id.split('#') as [string, string, string];
  return { type, registration, name };
}

/** Joins the parts into `<task_type>#<registration_name>#<task_name>`. */
export function formatTaskId(parts: TaskIdParts): string {
  return `${parts.type}#${parts.registration}#${parts.name}`;
}

/**
 * The directory of a Task: `<workspace>/<type>/<task_id>`. Only call with a parsed ID: its parts
 * cannot contain separators or `..`, so the path stays inside the workspace.
 */
export function taskDirOf(workspace: string, id: string, parts: TaskIdParts): string {
  return join(workspace, parts.type, id);
}

/** Workspace-relative path of a file in a Task directory (`<type>/<task_id>/<file>`). */
export function relativeTaskPath(parts: TaskIdParts, id: string, file: string): string {
  return `${parts.type}/${id}/${file}`;
}

/**
 * Normalises `source_tasks`: ASCII-comma separated Task IDs, whitespace around items stripped,
 * items rejoined with ','; an invalid or repeated ID is a ValueError naming it.
 */
export function normalizeSourceTasks(value: string): string[] {
  if (value.trim() === '') return [];
  const items = value.split(',').map((s) => s.trim());
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (!item) throw new ValueError(`source_tasks: item ${i + 1} is empty`);
    if (!parseTaskId(item)) throw new ValueError(`source_tasks: ${JSON.stringify(item)} is not a valid Task ID (<task_type>#<registration_name>#<task_name>)`);
    if (seen.has(item)) throw new ValueError(`source_tasks: duplicate Task ID ${item}`);
    seen.add(item);
  }
  return items;
}

/** Parses recorded source_tasks leniently (records written elsewhere may be sloppy). */
export function recordedSources(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  return [...new Set(value.split(',').map((s) => s.trim()).filter((s) => parseTaskId(s) !== null))];
}

let lastStamp = '';
let sequence = 0;

/**
 * A unique anonymous task_name that sorts by creation time: UTC time to the millisecond, a
 * per-millisecond sequence and random letters against other processes
 * (`20260101T120000123-0000-a1b2`, 27 characters).
 */
export function anonymousName(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:.Z]/g, '');
  sequence = stamp === lastStamp ? sequence + 1 : 0;
  lastStamp = stamp;
  return `${stamp}-${sequence.toString(36).padStart(4, '0')}-${randomBytes(2).toString('hex')}`;
}
