import { Type } from '../vendor/typebox.js';
import { ok } from '../schemas/job-response.js';
import { declareCapability } from './capability-contract.js';
import { READ_ONLY, defineJob } from '../core/job.js';
import { PluginManager } from '../supervisor/plugins/plugin-manager.js';
import { PluginChange, PluginInfo } from '../schemas/plugins.js';

const InstallInput = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'Staged path answered by POST /files (tmp/.../<sha256>/<file>.tgz), a tarball made by npm pack' }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'sha256 of the tarball, as answered by POST /files' }),
  },
  { additionalProperties: false },
);
const UninstallInput = Type.Object({ name: Type.String({ minLength: 1, description: 'npm package name of the plugin' }) }, { additionalProperties: false });

/**
 * Plugin Jobs: install_plugin, list_plugins, uninstall_plugin. Plugins only add Tasks, so no
 * change ever needs a restart.
 */
export const pluginsCapability = declareCapability({
  name: 'plugins',
  needs: ['tasks'],
  build: async (_env, { tasks }) => {
    const plugins = new PluginManager(tasks);
    await plugins.sweep();
    return {
      jobs: [
        defineJob({
          name: 'install_plugin',
          output: PluginChange,
          description:
            'Installs a plugin: an npm package tarball (npm pack) staged with POST /files whose package.json names its task module ' +
            '("taskyard": {"tasks": "./tasks.js"}). Verifies sha256, installs with npm (lifecycle scripts are not run; on an offline machine ' +
            'dependencies must be bundled), describes its Tasks in a child process and makes them submittable at once. ' +
            'Installing another version of an installed plugin upgrades it. Answers {name, version, tasks, restart_required}.',
          input: InstallInput,
          run: async (args, ctx) => ok({ ...(await plugins.install(args.path, args.sha256, ctx.signal)), restart_required: false }),
        }),
        defineJob({
          name: 'list_plugins',
          output: Type.Array(PluginInfo),
          description: 'Lists installed plugins: [{name, version, tasks}] sorted by name.',
          input: Type.Object({}, { additionalProperties: false }),
          annotations: READ_ONLY,
          run: async () => ok(await plugins.list()),
        }),
        defineJob({
          name: 'uninstall_plugin',
          output: PluginChange,
          description: 'Removes an installed plugin and its Tasks without a restart; refused while one of its Tasks is queued or running. Answers {name, version, tasks, restart_required}.',
          input: UninstallInput,
          annotations: { readOnlyHint: false, destructiveHint: true },
          run: async (args, ctx) => ok({ ...(await plugins.uninstall(args.name, ctx.signal)), restart_required: false }),
        }),
      ],
    };
  },
});
