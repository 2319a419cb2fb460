import { agentCapability } from './agent-capability.js';
import type { AppCapabilityEntry } from './app-capability.js';
import { consoleCapability } from './console-capability.js';
import { machineCapability } from './machine-capability.js';
import { metricsCapability } from './metrics-capability.js';
import { pluginsCapability } from './plugins-capability.js';
import { proxyCapability } from './proxy-capability.js';
import { snapshotsCapability } from './snapshots-capability.js';
import { tasksCapability } from './tasks-capability.js';
import { webhooksCapability } from './webhooks-capability.js';
import { workspaceCapability } from './workspace-capability.js';
import { workspaceMovesCapability } from './workspace-moves-capability.js';

/**
 * Every capability of the built-in service, in catalog order (each is built after the services it
 * declares it needs, wherever it stands here); the console's catch-all route last.
 */
export const DEFAULT_CAPABILITIES: readonly AppCapabilityEntry[] = [
  machineCapability,
  workspaceCapability,
  tasksCapability,
  workspaceMovesCapability,
  metricsCapability,
  pluginsCapability,
  snapshotsCapability,
  webhooksCapability,
  agentCapability,
  proxyCapability,
  consoleCapability,
];
