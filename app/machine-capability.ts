import { Type } from '../vendor/typebox.js';
import { ok } from '../schemas/job-response.js';
import { PACKAGE_VERSION } from '../core/build-info.js';
import { declareCapability } from './capability-contract.js';
import { READ_ONLY, defineJob } from '../core/job.js';
import { indexTargets } from '../core/targets.js';
import { checkTargets } from '../supervisor/machine/list-machines.js';
import { startMachineStatus } from '../supervisor/machine/machine-status.js';
import { shellJob } from '../supervisor/machine/shell-job.js';
import { MachineHealth, MachineInfo } from '../schemas/machine.js';
import { MachineHistory, ReadMachineHistoryInput } from '../schemas/machine-history.js';
import { gpuCommandsOf, sharedGpuProbe } from '../supervisor/machine/gpu-probe.js';
import { startMachineHistory } from '../supervisor/machine/machine-history.js';

const NoArguments = Type.Object({}, { additionalProperties: false });

/**
 * Machine Jobs: version, list_machines, machine_status, read_machine_history, shell.
 * `machine_status` names the GPU leases of the Tasks when the service has them (none otherwise);
 * the history samples the runner process trees of the Tasks running here.
 */
export const machineCapability = declareCapability({
  name: 'machine',
  uses: ['tasks'],
  build: async (env, { tasks }) => {
    const targets = indexTargets(env.config.targets);
    const gpuCommands = gpuCommandsOf(env.config.machine.gpu_commands);
    const status = await startMachineStatus(sharedGpuProbe(gpuCommands), tasks ? () => tasks.running.gpuLeases() : undefined);
    const history = await startMachineHistory(env.config.machine.history, gpuCommands, tasks ? () => tasks.running.runnerProcesses() : () => []);
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
        defineJob({
          name: 'read_machine_history',
          output: MachineHistory,
          description:
            'Answers the machine history sampled every machine.history.interval_ms over the last window_s: CPU %, memory, per-GPU utilization and memory, and per running Task (by task_id) its process tree\'s CPU %, RSS and GPU memory. Pass the answer\'s cursor as since to read only newer samples.',
          input: ReadMachineHistoryInput,
          annotations: READ_ONLY,
          run: async (args) => ok(history.read(args.since ?? 0)),
        }),
        shell.job,
      ],
      close: async () => {
        status.stop();
        await history.stop();
        await shell.settle();
      },
    };
  },
});
