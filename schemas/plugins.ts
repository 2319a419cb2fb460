import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Wire shapes of the plugin and snapshot Jobs (beyond the spec). */

/** What list_plugins answers about one plugin. */
export const PluginInfo = Type.Object({
  name: Type.String({ description: 'npm package name' }),
  version: Type.String(),
  tasks: Type.Array(Type.String(), { description: 'Registration names of its Tasks, sorted' }),
});
export type PluginInfo = Static<typeof PluginInfo>;

/** Answer of install_plugin and uninstall_plugin: plugins only add Tasks, so no restart is needed. */
export const PluginChange = Type.Object({ ...PluginInfo.properties, restart_required: Type.Boolean() });
export type PluginChange = Static<typeof PluginChange>;

/** Answer of sync_tasks: the Task IDs whose directories were replaced and deleted. */
export const SyncResult = Type.Object({ applied: Type.Array(Type.String()), deleted: Type.Array(Type.String()) });
export type SyncResult = Static<typeof SyncResult>;
