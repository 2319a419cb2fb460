import { join } from 'node:path';
import { isObject } from '../../core/is-object.js';
import { ValueError } from '../../core/errors.js';
import { readRegularFile } from '../../workers/safe-file.js';
import { STATE_DIR } from '../common/token-store.js';

/**
 * Which plugins are installed, and where: what the definition catalog describes and the plugin
 * installer changes. It lives here, below both, so the installer (supervisor/plugins) depends on
 * the Tasks side and never the other way round.
 */

/** Where the list of installed plugins lives, as a person finds it in the workspace. */
const LIST_FILE = `${STATE_DIR}/plugins/package.json`;

/** Where installed plugins live: an npm prefix inside the service's private state. */
export function pluginsDirOf(workspace: string): string {
  return join(workspace, STATE_DIR, 'plugins');
}

/**
 * Installed plugin packages: name → dependency spec (`file:tarballs/<sha256>.tgz`). The prefix's
 * `package.json` is the one list of what is installed: the Tasks offered and `list_plugins` both
 * come from it. No file means no plugins; a file that cannot be read as that list is a ValueError
 * saying so (never an empty list while the plugins' code is still there).
 */
export async function readDependencies(prefix: string): Promise<Map<string, string>> {
  let manifest: unknown;
  try {
    manifest = JSON.parse((await readRegularFile(join(prefix, 'package.json'))).toString('utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new ValueError(`the list of installed plugins (${LIST_FILE}) cannot be read (${(err as Error).message}): restore it, or delete it and install the plugins again`);
  }
  const deps = isObject(manifest) ? (manifest['dependencies'] ?? {}) : undefined;
  if (!isObject(deps) || !Object.values(deps).every((spec) => typeof spec === 'string')) {
    throw new ValueError(`the list of installed plugins (${LIST_FILE}) is not an npm package.json with a "dependencies" object of name → version: restore it, or delete it and install the plugins again`);
  }
  return new Map(Object.entries(deps as Record<string, string>));
}
