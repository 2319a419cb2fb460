import { randomBytes } from 'node:crypto';
import { access, readdir, realpath, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { check } from '../../schemas/validator.js';
import { KeyError, RuntimeError, ValueError } from '../../core/errors.js';
import { removeStagedFile, takeStagedFile } from '../workspace/staged-input.js';
import type { DefinitionCatalog } from '../tasks/definitions.js';
import { pluginsDirOf, readDependencies } from '../tasks/installed-plugins.js';
import { STATE_DIR } from '../common/token-store.js';
import { copyPrefix, pruneTarballs, readManifest, swapPrefix, TARBALLS } from './plugin-prefix.js';
import { runNpm } from './run-npm.js';
import { installDirectly, uninstallDirectly } from './direct-install.js';
import { isManifestFile } from '../../runner/command-tasks.js';
import { SerialQueue } from '../../core/serial-queue.js';
import type { PluginInfo } from '../../schemas/plugins.js';


/** Work areas live here, next to the live prefix, so the final swap is a rename on one file system. */
const WORK_DIR = 'plugin-work';

const exists = (path: string) => access(path).then(() => true, () => false);

/** What a change gives back; `staged`: its description of the staged set, if it made one. */
interface Changed<T> {
  readonly result: T;
  readonly staged?: DefinitionCatalog;
}

/** What the installer needs of the Tasks facade (declared here: the installer never reaches into it). */
export interface PluginHost {
  readonly workspace: string;
  /** Describes the live plugin set again. */
  reloadDefinitions(): Promise<void>;
  /** A catalog of the prefix under `root`, described as the live one is. */
  stagedCatalog(root: string): DefinitionCatalog;
  /** The live catalog takes over a staged description whose prefix moved from `from` to `to`. */
  adoptDefinitions(staged: DefinitionCatalog, from: string, to: string): void;
  /** Problems the live catalog found describing the installed plugins. */
  definitionErrors(): readonly string[];
  /** Registration names of a plugin's Tasks in the live catalog. */
  registrationsOf(plugin: string): string[];
  isRegistrationActive(registration: string): boolean;
}

/**
 * Installs and removes plugins without a restart. Every change is made on a copy of the live npm
 * prefix, checked there (npm's install, done in process for a package without dependencies, then
 * a child process describing every Task), and only then swapped in; a broken plugin therefore
 * leaves the installed set exactly as it was.
 * Changes are serialised: one at a time per service.
 */
export class PluginManager {
  readonly #rt: PluginHost;
  readonly #live: string;
  readonly #changes = new SerialQueue();

  constructor(rt: PluginHost) {
    this.#rt = rt;
    this.#live = pluginsDirOf(rt.workspace);
  }

  /**
   * Runs `change` on a staged copy of the prefix (`<root>/.taskyard/plugins`), then swaps it in.
   * The live catalog takes over the staged set's description where the change made one (the
   * swap moves that very code), and otherwise describes the new live set.
   */
  async #change<T>(change: (root: string, prefix: string) => Promise<Changed<T>>): Promise<T> {
    const work = join(this.#rt.workspace, STATE_DIR, WORK_DIR, randomBytes(8).toString('hex'));
    const root = join(work, 'root');
    const prefix = pluginsDirOf(root);
    try {
      // A list of installed plugins that cannot be read is said as it is, before npm trips on it.
      await readDependencies(this.#live);
      await copyPrefix(this.#live, prefix);
      const { result, staged } = await change(root, prefix);
      await pruneTarballs(prefix);
      const stagedReal = await realpath(prefix);
      await swapPrefix(this.#live, prefix, join(work, 'previous'));
      if (staged) this.#rt.adoptDefinitions(staged, stagedReal, await realpath(this.#live));
      else await this.#rt.reloadDefinitions();
      return result;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** `install_plugin`: the staged tarball at `path`, whose content must have `sha256`. */
  install(path: string, sha256: string, signal: AbortSignal): Promise<PluginInfo> {
    return this.#changes.run('prefix', async () => {
      const info = await this.#change(async (root, prefix) => {
        const upload = join(root, '..', 'upload.tgz');
        const taken = await takeStagedFile(this.#rt.workspace, path, upload);
        if (taken.sha256 !== sha256.toLowerCase()) throw new ValueError(`sha256 mismatch: the staged file has ${taken.sha256}, not ${sha256}`);
        const tarball = `${TARBALLS}/${taken.sha256}.tgz`;
        await rename(upload, join(prefix, tarball));
        if (!(await installDirectly(prefix, tarball))) await runNpm(['install', `./${tarball}`], prefix, signal);
        const name = [...(await readDependencies(prefix))].find(([, spec]) => spec === `file:${tarball}`)?.[0];
        if (!name) throw new ValueError(`npm installed ${taken.name} but did not record it as a dependency`);
        return this.#checkInstalled(root, prefix, name);
      });
      await removeStagedFile(this.#rt.workspace, path);
      return info;
    });
  }

  /** Describes the staged set and checks the new plugin's part of it. */
  async #checkInstalled(root: string, prefix: string, name: string): Promise<Changed<PluginInfo>> {
    if (name === 'taskyard') throw new ValueError('the package name taskyard is reserved');
    const manifest = await readManifest(prefix, name);
    if (!manifest) throw new ValueError(`package ${name} has no readable package.json`);
    if (!manifest.tasks) throw new ValueError(`package ${name} is not a taskyard plugin: its package.json has no "taskyard": {"tasks": "<module>"}`);
    const staged = this.#rt.stagedCatalog(root);
    await staged.reload();
    // Only problems this change brings refuse it: a plugin already installed and broken (a manifest
    // edited in place) is named by the listing and must not hold back every other install.
    const errors = await this.#newProblems(staged.errors, prefix);
    if (errors.length) throw new ValueError(`plugin ${name} cannot be installed: ${errors.join('; ')}`);
    const tasks = staged.registrationsOf(name);
    if (!tasks.length) {
      const why = isManifestFile(manifest.tasks) ? `its manifest ${manifest.tasks} lists none` : `its module ${manifest.tasks} exports an empty list`;
      throw new ValueError(`plugin ${name} declares no Tasks (${why})`);
    }
    for (const task of tasks) {
      const { input_schema, output_schema } = staged.get(task)!.definition;
      for (const [label, schema] of [['input', input_schema], ['output', output_schema]] as const) {
        try {
          check(schema, {});
        } catch (err) {
          throw new ValueError(`plugin ${name}: Task ${task} has an invalid ${label} schema: ${(err as Error).message}`);
        }
      }
    }
    return { result: { name, version: manifest.version, tasks }, staged };
  }

  /**
   * The staged set's problems that the live set does not have, each with its paths shown relative
   * to its prefix (the staged one is a private work area).
   */
  async #newProblems(staged: readonly string[], prefix: string): Promise<string[]> {
    const relative = (roots: readonly string[]) => (e: string) => roots.reduce((text, root) => text.replaceAll(`${root}/`, ''), e);
    const live = new Set(this.#rt.definitionErrors().map(relative([this.#live, await realpath(this.#live).catch(() => this.#live)])));
    return staged.map(relative([prefix, await realpath(prefix)])).filter((e) => !live.has(e));
  }

  /** `uninstall_plugin`: refused while one of the plugin's Tasks is queued or running. */
  uninstall(name: string, signal: AbortSignal): Promise<PluginInfo> {
    return this.#changes.run('prefix', async () => {
      if (!(await readDependencies(this.#live)).has(name)) throw new KeyError(`plugin ${name} is not installed${await this.#installedHint()}`);
      const tasks = this.#rt.registrationsOf(name);
      const running = tasks.find((t) => this.#rt.isRegistrationActive(t));
      if (running) throw new RuntimeError(`plugin ${name} cannot be removed while its Task ${running} is queued or running; cancel it or wait for it to finish`);
      const version = (await readManifest(this.#live, name))?.version ?? '';
      await this.#change(async (_root, prefix) => ({ result: (await uninstallDirectly(prefix, name)) || (await runNpm(['uninstall', name], prefix, signal)) }));
      return { name, version, tasks };
    });
  }

  async #installedHint(): Promise<string> {
    const names = [...(await readDependencies(this.#live)).keys()].sort();
    return names.length ? ` (installed: ${names.join(', ')})` : ' (no plugins are installed)';
  }

  /** `list_plugins`: every installed plugin with its version and Tasks, sorted by name. */
  async list(): Promise<PluginInfo[]> {
    const out: PluginInfo[] = [];
    for (const name of [...(await readDependencies(this.#live)).keys()].sort()) {
      out.push({ name, version: (await readManifest(this.#live, name))?.version ?? '', tasks: this.#rt.registrationsOf(name) });
    }
    return out;
  }

  /**
   * Removes work areas a crashed change left behind. A crash between the two renames of a swap
   * leaves no live prefix but a `previous` one: that is put back first, and described again.
   */
  async sweep(): Promise<void> {
    const workRoot = join(this.#rt.workspace, STATE_DIR, WORK_DIR);
    let restored = false;
    for (const name of await readdir(workRoot).catch(() => [] as string[])) {
      const previous = join(workRoot, name, 'previous');
      if (!(await exists(this.#live)) && (await exists(previous))) {
        await rename(previous, this.#live);
        restored = true;
      }
    }
    await rm(workRoot, { recursive: true, force: true });
    if (restored) await this.#rt.reloadDefinitions();
  }
}
