import type { Static, TSchema } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** The most samples the history ring may hold, whatever `machine.history` says (memory stays bounded). */
export const HISTORY_MAX_SAMPLES = 10_000;

/** Config `machine.history`: how often the machine and its running Tasks are sampled, and for how long samples are kept. */
export const MachineHistorySection = Type.Object(
  {
    /** false: no sampler runs, and `read_machine_history` answers no samples. */
    enabled: Type.Boolean({ default: true }),
    /** Milliseconds between two samples. */
    interval_ms: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
    /** Seconds of samples kept (the ring holds window_s * 1000 / interval_ms samples, at most HISTORY_MAX_SAMPLES). */
    window_s: Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600, default: 3_600 }),
  },
  { additionalProperties: false, default: {} },
);
export type MachineHistorySection = Static<typeof MachineHistorySection>;

/** Config `machine`: the history sampler, and the GPU tools `machine_status` and the sampler ask. */
export const MachineSection = Type.Object(
  {
    history: MachineHistorySection,
    /** The NVIDIA and AMD GPU tools, by name on PATH or by path. */
    gpu_commands: Type.Object(
      {
        nvidia_smi: Type.String({ minLength: 1, default: 'nvidia-smi' }),
        rocm_smi: Type.String({ minLength: 1, default: 'rocm-smi' }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);
export type MachineSection = Static<typeof MachineSection>;

/** Problems of `machine.history` the schema cannot see (its ring would exceed HISTORY_MAX_SAMPLES). */
export function machineHistoryProblems(history: MachineHistorySection): string[] {
  const samples = Math.ceil((history.window_s * 1000) / history.interval_ms);
  if (samples <= HISTORY_MAX_SAMPLES) return [];
  return [`machine.history: window_s ${history.window_s} at interval_ms ${history.interval_ms} keeps ${samples} samples, more than the ${HISTORY_MAX_SAMPLES} allowed: raise interval_ms or lower window_s`];
}

/** Input of `read_machine_history`. */
export const ReadMachineHistoryInput = Type.Object(
  {
    since: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'Answer only samples taken after this time (ms since the epoch): 0 for the whole window, then the cursor of the last answer' }),
    ),
  },
  { additionalProperties: false },
);
export type ReadMachineHistoryInput = Static<typeof ReadMachineHistoryInput>;

/** One GPU's series, aligned with the answer's `times` (null where a sample did not see it). */
export const GpuHistory = Type.Object({
  index: Type.Integer(),
  vendor: Type.String(),
  name: Nullable(Type.String()),
  memory_total_bytes: Nullable(Type.Number()),
  utilization_percent: Type.Array(Nullable(Type.Number())),
  memory_used_bytes: Type.Array(Nullable(Type.Number())),
});
export type GpuHistory = Static<typeof GpuHistory>;

/** One running Task's process tree, sampled while it ran (its own times). */
export const TaskHistory = Type.Object({
  run_id: Type.String(),
  times: Type.Array(Type.Number(), { description: 'Sample times (ms since the epoch)' }),
  cpu_percent: Type.Array(Nullable(Type.Number()), { description: 'CPU of the whole tree since the sample before, 100 = one core busy (null at its first sample)' }),
  rss_bytes: Type.Array(Type.Number(), { description: 'Resident memory of the whole tree' }),
  gpu_memory_bytes: Type.Array(Nullable(Type.Number()), { description: 'GPU memory its processes hold (nvidia-smi compute apps); null where no GPU tool answered' }),
  processes: Type.Array(Type.Integer(), { description: 'How many processes the tree had' }),
});
export type TaskHistory = Static<typeof TaskHistory>;

/** Answer of `read_machine_history`: the samples after `since`, as series. */
export const MachineHistory = Type.Object({
  interval_ms: Type.Integer(),
  window_s: Type.Integer(),
  cursor: Type.Integer({ minimum: 0, description: 'Pass as since to read only the samples after these' }),
  times: Type.Array(Type.Number(), { description: 'Sample times (ms since the epoch), oldest first' }),
  cpu_percent: Type.Array(Nullable(Type.Number()), { description: 'Machine CPU busy since the sample before, all cores = 100' }),
  memory_used_bytes: Type.Array(Type.Number()),
  memory_total_bytes: Nullable(Type.Number()),
  gpus: Type.Array(GpuHistory),
  tasks: Type.Record(Type.String(), TaskHistory, { description: 'task_id → its series' }),
});
export type MachineHistory = Static<typeof MachineHistory>;
