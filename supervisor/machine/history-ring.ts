import type { GpuDevice } from '../../schemas/machine.js';
import type { GpuHistory, MachineHistory, TaskHistory } from '../../schemas/machine-history.js';

/** One running Task's process tree in a sample. */
export interface TaskSample {
  taskId: string;
  runId: string;
  cpuPercent: number | null;
  rssBytes: number;
  gpuMemoryBytes: number | null;
  processes: number;
}

/** What the sampler saw at one moment. */
export interface MachineSample {
  /** ms since the epoch, strictly increasing from one sample to the next (the read cursor). */
  at: number;
  cpuPercent: number | null;
  memoryUsedBytes: number;
  memoryTotalBytes: number;
  gpus: readonly GpuDevice[];
  tasks: readonly TaskSample[];
}

/** A fixed number of samples, oldest overwritten first: the history never grows past its window. */
export class SampleRing {
  readonly #slots: (MachineSample | undefined)[];
  #next = 0;

  constructor(capacity: number) {
    this.#slots = new Array<MachineSample | undefined>(Math.max(1, capacity));
  }

  get capacity(): number {
    return this.#slots.length;
  }

  push(sample: MachineSample): void {
    this.#slots[this.#next] = sample;
    this.#next = (this.#next + 1) % this.#slots.length;
  }

  /** The latest sample's time, or 0 before the first. */
  get latest(): number {
    return this.#slots[(this.#next + this.#slots.length - 1) % this.#slots.length]?.at ?? 0;
  }

  /** The samples taken after `since`, oldest first. */
  after(since: number): MachineSample[] {
    const found: MachineSample[] = [];
    for (let i = 0; i < this.#slots.length; i++) {
      const sample = this.#slots[(this.#next + i) % this.#slots.length];
      if (sample && sample.at > since) found.push(sample);
    }
    return found;
  }
}

/**
 * Turns samples into the answer's series: machine series aligned with `times`, one series per
 * GPU (null where a sample did not see it), and per Task its own times (Tasks come and go).
 */
export function historySeries(samples: readonly MachineSample[], since: number, settings: { interval_ms: number; window_s: number }): MachineHistory {
  const gpus = new Map<string, GpuHistory>();
  const tasks: Record<string, TaskHistory> = {};
  samples.forEach((sample, i) => {
    for (const gpu of sample.gpus) {
      const key = `${gpu.vendor}:${gpu.index}`;
      let series = gpus.get(key);
      if (!series) {
        series = { index: gpu.index, vendor: gpu.vendor, name: gpu.name, memory_total_bytes: gpu.memory_total_bytes, utilization_percent: new Array(i).fill(null), memory_used_bytes: new Array(i).fill(null) };
        gpus.set(key, series);
      }
      series.utilization_percent.push(gpu.utilization_percent);
      series.memory_used_bytes.push(gpu.memory_used_bytes);
    }
    // A GPU this sample did not see (the tool failed this time) gets a gap, so series stay aligned.
    for (const series of gpus.values()) {
      if (series.utilization_percent.length > i) continue;
      series.utilization_percent.push(null);
      series.memory_used_bytes.push(null);
    }
    for (const task of sample.tasks) {
      const series = (tasks[task.taskId] ??= { run_id: task.runId, times: [], cpu_percent: [], rss_bytes: [], gpu_memory_bytes: [], processes: [] });
      series.run_id = task.runId;
      series.times.push(sample.at);
      series.cpu_percent.push(task.cpuPercent);
      series.rss_bytes.push(task.rssBytes);
      series.gpu_memory_bytes.push(task.gpuMemoryBytes);
      series.processes.push(task.processes);
    }
  });
  const last = samples.at(-1);
  return {
    ...settings,
    cursor: last?.at ?? since,
    times: samples.map((s) => s.at),
    cpu_percent: samples.map((s) => s.cpuPercent),
    memory_used_bytes: samples.map((s) => s.memoryUsedBytes),
    memory_total_bytes: last?.memoryTotalBytes ?? null,
    gpus: [...gpus.values()].sort((a, b) => a.vendor.localeCompare(b.vendor) || a.index - b.index),
    tasks,
  };
}
