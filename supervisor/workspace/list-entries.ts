import type { Dir, Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { WORKSPACE_LIMITS, type WorkspaceEntry, type WorkspaceListing } from '../../schemas/workspace.js';
import { BusinessError, FileNotFoundError } from '../../core/errors.js';
import { STATE_DIR } from '../common/token-store.js';
import { describeEntries, describeEntry, type EntryLocation } from './describe-entry.js';
import { resolveClientPath } from './safe-path.js';

/** Sort key: directories (links to directories included) before everything else, then by name. */
interface Ranked {
  name: string;
  directory: boolean;
  /** Links are described while ranking (their kind needs resolving anyway). */
  described?: WorkspaceEntry;
}

const byRank = (a: Ranked, b: Ranked) => (a.directory === b.directory ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.directory ? -1 : 1);

async function rank(at: EntryLocation, dirent: Dirent): Promise<Ranked | null> {
  if (!dirent.isSymbolicLink()) return { name: dirent.name, directory: dirent.isDirectory() };
  const described = await describeEntry(at, dirent.name);
  return described && { name: dirent.name, directory: described.kind === 'directory', described };
}

/**
 * One level of a workspace directory: directories first, then by name (code point order), at most
 * 5000 entries. Names are read and ranked first; only the entries returned are stat'ed.
 */
export async function listEntries(root: string, input: string): Promise<WorkspaceListing> {
  const dir = await resolveClientPath(root, input);
  if (!dir.exists) throw new FileNotFoundError(`no such directory: ${input}`);
  const at: EntryLocation = { root, parentReal: dir.real, parentRelative: dir.relative };
  let handle: Dir;
  try {
    handle = await opendir(dir.real, { bufferSize: 256 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new BusinessError('NotADirectoryError', `not a directory: ${input}`);
    throw err;
  }
  const ranked: Ranked[] = [];
  for await (const dirent of handle) {
    // The service-private directory is never shown, also not through a link to the root.
    if (dir.real === root && dirent.name === STATE_DIR) continue;
    const item = await rank(at, dirent);
    if (item) ranked.push(item);
  }
  ranked.sort(byRank);
  const limit = WORKSPACE_LIMITS.listingEntries;
  const kept = ranked.slice(0, limit);
  const plain = await describeEntries(at, kept.filter((r) => !r.described).map((r) => r.name));
  const byName = new Map(plain.map((e) => [e.name, e]));
  const entries = kept.map((r) => r.described ?? byName.get(r.name)).filter((e): e is WorkspaceEntry => e !== undefined);
  return { path: dir.relative, entries, truncated: ranked.length > limit };
}
