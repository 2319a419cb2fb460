import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Parser, x as extract, type ReadEntry } from 'tar';
import { isObject } from '../../core/is-object.js';
import { readJsonObject } from '../common/json-file.js';

/*
 * Most plugins are one package with no dependencies: for those, `npm install ./tarball` (and
 * `npm uninstall`) do nothing but unpack (or remove) one folder and record it in package.json and
 * the two lockfiles, at ~1 s of CPU and ~1.5 s of latency per change, nearly all of it npm loading
 * itself. Here that same work is done in process, writing what npm writes (unpacked as pacote
 * unpacks: links skipped, no mtimes, modes widened to 0o666/0o777), so npm's later commands on
 * the prefix see a tree they made. Anything else (dependencies of any kind, bins, platform
 * constraints, a prefix whose tree is not flat, a tarball that does not read) answers false, and
 * the caller runs npm, which does the full job or says what is wrong in its own words.
 */

type Json = Record<string, unknown>;

/** Fields that make npm do more than unpack: other packages to fetch or link, bins, platform checks. */
const NEEDS_NPM = ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies', 'bin', 'os', 'cpu', 'libc', 'workspaces'];
/** Manifest fields npm copies into a lockfile entry (beside version, resolved, integrity). */
const LOCKED_FIELDS = ['license', 'engines', 'funding'];
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** Names npm refuses although they match NAME. */
const RESERVED_NAMES = new Set(['node_modules', 'favicon.ico']);
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

const isEmpty = (value: unknown) => value === undefined || value === false || (isObject(value) ? Object.keys(value).length === 0 : Array.isArray(value) && value.length === 0);
const sorted = (deps: Json): Json => Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a.localeCompare(b, 'en')));
const writeJson = (file: string, value: unknown) => writeFile(file, `${JSON.stringify(value, null, 2)}\n`);

/** Resolves when a tar stream ends; rejects on its first error. */
const ended = (stream: NodeJS.EventEmitter, done: string) =>
  new Promise<void>((resolve, reject) => {
    stream.once(done, () => resolve());
    stream.once('error', reject);
  });

/** `package/package.json` of a package tarball, or null when the tarball does not read as one. */
async function readPackedManifest(tarball: Buffer): Promise<Json | null> {
  let text = '';
  let foreign = false;
  const parser = new Parser({ strict: true });
  parser.on('entry', (entry: ReadEntry) => {
    if (!entry.path.startsWith('package/')) foreign = true;
    if (entry.path !== 'package/package.json' || entry.type !== 'File') return void entry.resume();
    entry.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  });
  const done = ended(parser, 'end');
  parser.end(tarball);
  if (!(await done.then(() => true, () => false)) || foreign) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The prefix's package.json and lockfile, when its tree is flat: every package a root dependency with none of its own. */
async function readFlatPrefix(prefix: string): Promise<{ pkg: Json; lock: Json; packages: Json } | null> {
  const pkg = await readJsonObject(join(prefix, 'package.json'));
  if (!pkg) return null;
  const deps = pkg['dependencies'] ?? {};
  if (!isObject(deps)) return null;
  const lock = (await readJsonObject(join(prefix, 'package-lock.json'))) ?? (Object.keys(deps).length ? null : { name: basename(prefix), lockfileVersion: 3, requires: true, packages: { '': {} } });
  const packages = lock?.['packages'];
  if (!lock || lock['lockfileVersion'] !== 3 || !isObject(packages)) return null;
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '') continue;
    const name = path.replace(/^node_modules\//, '');
    if (!(name in deps) || !isObject(entry) || NEEDS_NPM.some((field) => !isEmpty(entry[field]))) return null;
  }
  return { pkg, lock, packages };
}

/**
 * Writes package.json, package-lock.json and (last, so npm finds it newer than the tree) the
 * hidden lockfile; as npm, an empty `dependencies` is left out.
 */
async function writePrefix(prefix: string, state: { pkg: Json; lock: Json; packages: Json }, deps: Json): Promise<void> {
  const withDeps = (object: Json): Json => {
    const { dependencies: _old, ...rest } = object;
    return Object.keys(deps).length ? { ...rest, dependencies: deps } : rest;
  };
  const { '': root, ...installed } = state.packages;
  const rootEntry = withDeps(isObject(root) ? root : {});
  const byPath = Object.entries(installed).sort(([a], [b]) => a.localeCompare(b, 'en'));
  const packages = Object.fromEntries(Object.keys(rootEntry).length ? [['', rootEntry], ...byPath] : byPath);
  await writeJson(join(prefix, 'package.json'), withDeps(state.pkg));
  await writeJson(join(prefix, 'package-lock.json'), { ...state.lock, packages });
  await mkdir(join(prefix, 'node_modules'), { recursive: true });
  await writeJson(join(prefix, 'node_modules', '.package-lock.json'), { name: state.lock['name'], lockfileVersion: 3, requires: true, packages: Object.fromEntries(byPath) });
}

/**
 * `npm install ./<tarball>` in `prefix` (`tarball` relative to it), done in process when npm would
 * only unpack it; false (nothing changed) when npm must do it.
 */
export async function installDirectly(prefix: string, tarball: string): Promise<boolean> {
  const bytes = await readFile(join(prefix, tarball));
  const manifest = await readPackedManifest(bytes);
  const name = manifest?.['name'];
  const version = manifest?.['version'];
  if (!manifest || typeof name !== 'string' || !NAME.test(name) || RESERVED_NAMES.has(name) || name.length > 214 || typeof version !== 'string' || !VERSION.test(version)) return false;
  if (NEEDS_NPM.some((field) => !isEmpty(manifest[field])) || (isObject(manifest['directories']) && manifest['directories']['bin'] !== undefined)) return false;
  const state = await readFlatPrefix(prefix);
  if (!state) return false;

  const dir = join(prefix, 'node_modules', ...name.split('/'));
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const npmignores = new Set<string>();
  const unpack = extract({
    cwd: dir,
    strip: 1,
    noChmod: true,
    noMtime: true,
    preserveOwner: false,
    // As pacote: files only (links skipped), and a .gitignore stands for the .npmignore that
    // npm pack renamed, unless the package has that .npmignore too.
    filter: (_path, entry) => {
      const member = entry as ReadEntry;
      if (!/File$/.test(member.type)) return false;
      member.mode = (member.mode ?? 0) | 0o666;
      if (basename(member.path) === '.npmignore') npmignores.add(member.path);
      else if (basename(member.path) === '.gitignore') {
        const renamed = member.path.replace(/\.gitignore$/, '.npmignore');
        if (npmignores.has(renamed)) return false;
        member.path = renamed;
      }
      return true;
    },
  });
  const done = ended(unpack, 'close');
  unpack.end(bytes);
  await done;

  const scripts = isObject(manifest['scripts']) ? manifest['scripts'] : {};
  const entry: Json = { version, resolved: `file:${tarball}`, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` };
  for (const field of LOCKED_FIELDS) if (manifest[field] !== undefined) entry[field] = manifest[field];
  if (INSTALL_SCRIPTS.some((s) => s in scripts)) entry['hasInstallScript'] = true;
  const deps = sorted({ ...(state.pkg['dependencies'] as Json | undefined), [name]: `file:${tarball}` });
  await writePrefix(prefix, { ...state, packages: { ...state.packages, [`node_modules/${name}`]: entry } }, deps);
  return true;
}

/** `npm uninstall <name>` in `prefix`, done in process when the tree is flat; false (nothing changed) when npm must do it. */
export async function uninstallDirectly(prefix: string, name: string): Promise<boolean> {
  const state = await readFlatPrefix(prefix);
  if (!state || !NAME.test(name)) return false;
  const { [name]: _removed, ...deps } = (state.pkg['dependencies'] ?? {}) as Json;
  const { [`node_modules/${name}`]: _entry, ...packages } = state.packages;
  await rm(join(prefix, 'node_modules', ...name.split('/')), { recursive: true, force: true });
  await writePrefix(prefix, { ...state, packages }, deps);
  return true;
}
