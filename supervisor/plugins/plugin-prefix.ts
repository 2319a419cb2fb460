import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonObject } from '../common/json-file.js';
import { readDependencies } from '../tasks/installed-plugins.js';

/**
 * The installed plugins are one npm prefix: `package.json` lists each plugin as a dependency on
 * its own tarball, kept under `tarballs/<sha256>.tgz` inside the prefix, so npm can rebuild or
 * prune the tree later without the (removed) staged upload.
 */
export const TARBALLS = 'tarballs';

export interface PluginManifest {
  name: string;
  version: string;
  /** The `taskyard.tasks` module path, when the package declares one. */
  tasks: string | null;
}

/** The installed package's own manifest, or null when it is missing or unreadable. */
export async function readManifest(prefix: string, name: string): Promise<PluginManifest | null> {
  const pkg = await readJsonObject(join(prefix, 'node_modules', ...name.split('/'), 'package.json'));
  if (!pkg) return null;
  const taskyard = pkg['taskyard'];
  const tasks = typeof taskyard === 'object' && taskyard !== null ? (taskyard as Record<string, unknown>)['tasks'] : undefined;
  return { name: String(pkg['name'] ?? name), version: String(pkg['version'] ?? ''), tasks: typeof tasks === 'string' ? tasks : null };
}

/** A working copy of the live prefix (or a fresh, empty one) where npm may change anything. */
export async function copyPrefix(live: string, staged: string): Promise<void> {
  const hasLive = await readFile(join(live, 'package.json')).then(() => true, () => false);
  if (hasLive) {
    await cp(live, staged, { recursive: true, verbatimSymlinks: true });
  } else {
    await mkdir(staged, { recursive: true });
    await writeFile(join(staged, 'package.json'), `${JSON.stringify({ private: true, description: 'taskyard plugins', dependencies: {} }, null, 2)}\n`);
  }
  await mkdir(join(staged, TARBALLS), { recursive: true });
}

/** Deletes kept tarballs that no dependency refers to any more (after an upgrade or removal). */
export async function pruneTarballs(prefix: string): Promise<void> {
  const used = new Set([...(await readDependencies(prefix)).values()].map((spec) => spec.replace(/^file:/, '')));
  for (const name of await readdir(join(prefix, TARBALLS)).catch(() => [] as string[])) {
    if (!used.has(`${TARBALLS}/${name}`)) await rm(join(prefix, TARBALLS, name), { force: true });
  }
}

/**
 * Puts the staged prefix in place of the live one with two renames; the old one goes to `trash`
 * (deleted by the caller). If the second rename fails the old prefix is put back.
 */
export async function swapPrefix(live: string, staged: string, trash: string): Promise<void> {
  const hadLive = await rename(live, trash).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
  try {
    await rename(staged, live);
  } catch (err) {
    if (hadLive) await rename(trash, live);
    throw err;
  }
}
