import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { WORKSPACE_LIMITS, type WorkspaceListing } from '../../schemas/workspace.js';
import { describeEntries } from './describe-entry.js';
import { resolveClientPath } from './safe-path.js';

const isRegularFile = async (path: string) => (await lstat(path).catch(() => null))?.isFile() === true;

/**
 * Task directories `<task_type>/<task_type>#...` holding a `metadata.json` (finished runs).
 * Links are never followed here: an unsafe directory looks like a missing one (spec: reading
 * tolerates bad records), and a missing type directory is simply an empty listing.
 */
export async function listTaskRuns(root: string, taskType: string): Promise<WorkspaceListing> {
  const dir = await resolveClientPath(root, taskType);
  const empty: WorkspaceListing = { path: dir.relative, entries: [], truncated: false };
  const lexical = join(root, dir.relative);
  if (!dir.exists || dir.real !== lexical || !(await lstat(lexical)).isDirectory()) return empty;
  const dirents = await readdir(lexical, { withFileTypes: true }).catch(() => []);
  const candidates = dirents.filter((d) => d.isDirectory() && d.name.startsWith(`${taskType}#`)).map((d) => d.name);
  const finished = (await Promise.all(candidates.map(async (n) => ((await isRegularFile(join(lexical, n, 'metadata.json'))) ? n : null))))
    .filter((n): n is string => n !== null)
    .sort();
  const limit = WORKSPACE_LIMITS.listingEntries;
  const entries = await describeEntries({ root, parentReal: lexical, parentRelative: dir.relative }, finished.slice(0, limit));
  return { path: dir.relative, entries, truncated: finished.length > limit };
}
