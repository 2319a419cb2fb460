import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { isTerminal } from '../../core/task-record/record-files.js';
import { ValueError } from '../../core/errors.js';
import { readStatus } from '../tasks/records/records.js';
import { parseTaskId } from '../tasks/records/task-ids.js';

/** Refuses anything but plain files and directories: the receiving side would refuse them too. */
async function checkTree(dir: string, shown: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() && !entry.isDirectory()) {
      throw new ValueError(`${shown}/${join(entry.parentPath, entry.name).slice(dir.length + 1)} is not a regular file or directory; snapshots carry only those`);
    }
  }
}

/**
 * Packs finished Tasks of `workspace` into a `.tar.gz` snapshot of `<task_type>/<task_id>/...`
 * directories, the format `sync_tasks` applies. Every Task must exist, be terminal and hold only
 * regular files; the archive is portable (no owners, fixed modes).
 */
export async function packSnapshot(workspace: string, taskIds: readonly string[], file: string): Promise<void> {
  if (!taskIds.length) throw new ValueError('name at least one Task ID');
  const members: string[] = [];
  for (const id of new Set(taskIds)) {
    const parts = parseTaskId(id);
    if (!parts) throw new ValueError(`${JSON.stringify(id)} is not a valid Task ID (<task_type>#<registration_name>#<task_name>)`);
    const relative = `${parts.type}/${id}`;
    const dir = join(workspace, parts.type, id);
    if (!(await lstat(dir).then((s) => s.isDirectory(), () => false))) throw new ValueError(`Task ${id} has no directory ${relative} in ${workspace}`);
    const status = await readStatus(dir, id, parts.type);
    if (!status) throw new ValueError(`Task ${id} has no valid status.json`);
    if (!isTerminal(status.state)) throw new ValueError(`Task ${id} is ${status.state}; only finished Tasks can be pushed`);
    await checkTree(dir, relative);
    members.push(relative);
  }
  await createTar({ gzip: true, portable: true, cwd: workspace, file }, members);
}
