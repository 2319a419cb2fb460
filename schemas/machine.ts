import type { Static, TSchema } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Seconds a `shell` command may run when the caller does not say. */
export const DEFAULT_SHELL_TIMEOUT = 30;

/** Arguments of `shell` (spec, Machine Jobs): only these fields are accepted. */
export const ShellArguments = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'Command line run by /bin/sh -c in the workspace' }),
    // Optional with a default: validation fills it in, and clients see it is not required.
    timeout: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 300, default: DEFAULT_SHELL_TIMEOUT, description: 'Seconds before the whole process tree is killed' }),
    ),
  },
  { additionalProperties: false },
);
export type ShellArguments = Static<typeof ShellArguments>;

/** Answer of `shell`. */
export const ShellOutput = Type.Object({
  stdout: Type.String({ description: 'At most 1 MiB retained' }),
  stderr: Type.String({ description: 'At most 1 MiB retained' }),
  exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null on timeout; 128+signal number when killed by a signal' }),
  stdout_truncated: Type.Boolean(),
  stderr_truncated: Type.Boolean(),
});
export type ShellOutput = Static<typeof ShellOutput>;

/** Items of the `list_machines` answer. */
export const MachineHealth = Type.Object({ address: Type.String(), healthy: Type.Boolean() });
export type MachineHealth = Static<typeof MachineHealth>;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** One GPU as reported by nvidia-smi or rocm-smi; fields the tool does not report are null. */
export const GpuDevice = Type.Object({
  vendor: Type.Union([Type.Literal('nvidia'), Type.Literal('amd')]),
  index: Type.Integer(),
  name: Type.Union([Type.String(), Type.Null()]),
  uuid: Type.Union([Type.String(), Type.Null()]),
  memory_total_bytes: Nullable(Type.Integer()),
  memory_used_bytes: Nullable(Type.Integer()),
  utilization_percent: Nullable(Type.Number()),
  temperature_celsius: Nullable(Type.Number()),
});
export type GpuDevice = Static<typeof GpuDevice>;

/** A GPU the local executor leased to a running Task (issue 14). */
export const GpuLease = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  task_id: Type.String(),
  run_id: Type.String(),
});
export type GpuLease = Static<typeof GpuLease>;

/** Answer of `machine_status`; `axonx` is the spec's literal key for build information. */
export const MachineInfo = Type.Object({
  axonx: Type.Object({
    version: Type.String(),
    git_commit: Type.Union([Type.String(), Type.Null()]),
    git_branch: Type.Union([Type.String(), Type.Null()]),
  }),
  cpu: Type.Object({
    total_cores: Nullable(Type.Integer()),
    physical_cores: Nullable(Type.Integer()),
    usage_percent: Type.Number(),
  }),
  memory: Type.Object({
    total_bytes: Type.Integer(),
    used_bytes: Type.Integer(),
    available_bytes: Type.Integer(),
    usage_percent: Type.Number(),
  }),
  gpus: Type.Array(GpuDevice),
  /** Which Task holds which GPU index now (local executor); empty when none is leased. */
  gpu_leases: Type.Array(GpuLease),
});
export type MachineInfo = Static<typeof MachineInfo>;
