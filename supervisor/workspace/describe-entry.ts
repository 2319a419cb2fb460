import { lstat, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTRY_KINDS, type WorkspaceEntry } from '../../schemas/workspace.js';
import { previewKindOf } from '../../workers/preview/preview-kind.js';
import { STATE_DIR } from '../common/token-store.js';
import { isInside } from './safe-path.js';

/** Where a listed entry sits: its parent's real path and workspace-relative path. */
export interface EntryLocation {
  readonly root: string;
  readonly parentReal: string;
  readonly parentRelative: string;
}

/** True when a link's target may be shown: inside the workspace and outside its private directory. */
function leadsInside(root: string, real: string): boolean {
  return isInside(root, real) && !isInside(join(root, STATE_DIR), real);
}

/**
 * Describes one directory entry, or returns null when it vanished meanwhile. A link that resolves
 * inside the workspace is described as its target (operations follow it); any other link is a
 * `symlink` entry that cannot be previewed.
 */
export async function describeEntry(at: EntryLocation, name: string): Promise<WorkspaceEntry | null> {
  const abs = join(at.parentReal, name);
  const path = at.parentRelative ? `${at.parentRelative}/${name}` : name;
  const link = await lstat(abs).catch(() => null);
  if (!link) return null;
  let info = link;
  let kind: WorkspaceEntry['kind'] | null = null;
  if (link.isSymbolicLink()) {
    const real = await realpath(abs).catch(() => null);
    const target = real !== null && leadsInside(at.root, real) ? await stat(real).catch(() => null) : null;
    if (target) info = target;
    else kind = ENTRY_KINDS.symlink;
  }
  kind ??= info.isDirectory() ? ENTRY_KINDS.directory : info.isFile() ? ENTRY_KINDS.file : ENTRY_KINDS.other;
  const preview_kind = kind === ENTRY_KINDS.file ? previewKindOf(name) : null;
  return {
    name,
    path,
    kind,
    preview_kind,
    supported: preview_kind !== null && preview_kind !== 'unsupported',
    size: kind === ENTRY_KINDS.file ? info.size : null,
    modified_at: info.mtime.toISOString(),
  };
}

/** Describes names in order, dropping those that vanished. */
export async function describeEntries(at: EntryLocation, names: readonly string[]): Promise<WorkspaceEntry[]> {
  const described = await Promise.all(names.map((n) => describeEntry(at, n)));
  return described.filter((e): e is WorkspaceEntry => e !== null);
}
