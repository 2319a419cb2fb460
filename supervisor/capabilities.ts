import type { CapabilityFactory } from './capability.js';
import { consoleCapability } from './console/capability.js';
import { machineCapability } from './machine/capability.js';
import { tasksCapability } from './tasks/capability.js';
import { workspaceCapability } from './workspace/capability.js';

/** Every capability of the built-in service, in catalog order (the console's catch-all route last). */
export const DEFAULT_CAPABILITIES: readonly CapabilityFactory[] = [machineCapability, workspaceCapability, tasksCapability, consoleCapability];
