import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Places a one-module plugin named `name` in a workspace's plugin prefix, as `install_plugin` would
 * leave it: its package under `node_modules`, and its name in the prefix's `package.json` (the list
 * of installed plugins, the only plugins described and offered).
 */
export async function placeBenchPlugin(workspace: string, name: string, tasksModule: string): Promise<void> {
  const prefix = join(workspace, '.taskyard', 'plugins');
  const pkg = join(prefix, 'node_modules', name);
  await mkdir(pkg, { recursive: true });
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', taskyard: { tasks: './tasks.js' } }));
  await writeFile(join(pkg, 'tasks.js'), tasksModule);
  await writeFile(join(prefix, 'package.json'), JSON.stringify({ private: true, dependencies: { [name]: '1.0.0' } }));
}
