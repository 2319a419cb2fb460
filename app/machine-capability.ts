import { Type } from '../vendor/typebox.js';
import { ok } from '../schemas/job-response.js';
import { PACKAGE_VERSION } from '../core/build-info.js';
import type { CapabilityFactory } from './capability-contract.js';
import { READ_ONLY, defineJob } from '../core/job.js';
import { indexTargets } from '../core/targets.js';
import { checkTargets } from '../supervisor/machine/list-machines.js';
import { startMachineStatus } from '../supervisor/machine/machine-status.js';
import { findTaskRuntime } from './tasks-capability.js';
import { shellJob } from '../supervisor/machine/shell-job.js';
import { MachineHealth, MachineInfo } from '../schemas/machine.js';

const NoArguments = Type.Object({}, { additionalProperties: false });

/** Machine Jobs: version, list_machines, machine_status, shell. */
export const machineCapability: CapabilityFactory = async (env) => {
  const targets = indexTargets(env.config.targets);
  // The task runtime is built after this capability: its leases are looked up at each read.
  const status = await startMachineStatus(undefined, () => findTaskRuntime(env)?.gpuLeases() ?? []);
  const shell = shellJob(env.pool, env.workspace, env.runAs ?? null);
  return {
    jobs: [
      defineJob({
        name: 'version',
        output: Type.String(),
        description: 'Returns the installed taskyard version (also in metadata.version).',
        input: NoArguments,
        annotations: READ_ONLY,
        run: async () => ok(PACKAGE_VERSION, { version: PACKAGE_VERSION }),
      }),
      defineJob({
        name: 'list_machines',
        output: Type.Array(MachineHealth),
        description: 'Checks every configured target (GET /health with its stored token) and answers [{address, healthy}]; [] without targets.',
        input: NoArguments,
        annotations: { ...READ_ONLY, openWorldHint: true },
        run: async (_args, ctx) => ok(await checkTargets(targets.values(), ctx.signal)),
      }),
      defineJob({
        name: 'machine_status',
        output: MachineInfo,
        description: 'Answers MachineInfo of this machine: build info (key axonx), CPU, memory, NVIDIA/AMD GPUs and gpu_leases (which Task holds which GPU index).',
        input: NoArguments,
        annotations: READ_ONLY,
        run: async () => ok(await status.read()),
      }),
      shell.job,
    ],
    close: async () => {
      status.stop();
      await shell.settle();
    },
  };
};
