import { ValueError } from '../../core/errors.js';
import type { GpuDevice } from '../../schemas/machine.js';
import type { MachineHistory, MachineHistorySection } from '../../schemas/machine-history.js';
import { readCpuTimes, usageBetween, type CpuTimes } from './cpu-usage.js';
import { presentGpuCommands, probeGpuProcessMemory, probeGpus, type GpuCommands } from './gpu-probe.js';
import { historySeries, SampleRing, type MachineSample, type TaskSample } from './history-ring.js';
import { readMemory } from './memory-info.js';
import { ProcessScanner, readProcUnits, TreeUsageMeter } from './process-usage.js';

/** A Task's runner process on this machine: the root of the tree sampled for it. */
export interface SampledRunner {
  readonly taskId: string;
  readonly runId: string;
  readonly pid: number;
}

/** Tasks one sample measures at most: a sample's size stays bounded however many Tasks run. */
export const MAX_TASKS_PER_SAMPLE = 256;

export interface MachineHistorySource {
  /** The samples taken after `since` (ms since the epoch) as series; a `since` later than now is a ValueError. */
  read(since: number): MachineHistory;
  /** Stops sampling; resolves once a sample in progress has ended. */
  stop(): Promise<void>;
}

/**
 * Samples the machine (CPU, memory, GPUs) and each running Task's process tree (CPU, RSS, GPU
 * memory) every `interval_ms` into a ring of the last `window_s`. It runs on its own timer, apart
 * from every request: a read only copies the ring into series. A sample that takes longer than
 * the interval (a slow nvidia-smi) delays the next one instead of overlapping it.
 */
export async function startMachineHistory(settings: MachineHistorySection, gpuCommands: GpuCommands, runners: () => readonly SampledRunner[]): Promise<MachineHistorySource> {
  const shape = { interval_ms: settings.interval_ms, window_s: settings.window_s };
  const ring = new SampleRing(settings.enabled ? Math.ceil((settings.window_s * 1000) / settings.interval_ms) : 0);
  const read = (since: number): MachineHistory => {
    const now = Math.max(Date.now(), ring.latest);
    if (since > now) throw new ValueError(`since ${since} is later than the service's latest sample time (${now}): pass 0, or the cursor of a previous read_machine_history answer`);
    return historySeries(settings.enabled ? ring.after(since) : [], since, shape);
  };
  if (!settings.enabled) return { read, stop: async () => {} };

  let stopped = false;
  // One signal per sample: a hung GPU tool is killed at stop (a signal kept for the sampler's whole life would gather a listener per call).
  let sampling = new AbortController();
  const meter = new TreeUsageMeter(await readProcUnits());
  const scanner = new ProcessScanner();
  let cpuBefore: CpuTimes = await readCpuTimes();
  const present = presentGpuCommands(gpuCommands);

  const sample = async (signal: AbortSignal): Promise<MachineSample> => {
    const [cpu, memory, gpus] = await Promise.all([readCpuTimes(), readMemory(), probeGpus(present(), signal)]);
    const cpuPercent = usageBetween(cpuBefore, cpu);
    cpuBefore = cpu;
    const at = Math.max(Date.now(), ring.latest + 1);
    return { at, cpuPercent, memoryUsedBytes: memory.used_bytes, memoryTotalBytes: memory.total_bytes, gpus, tasks: await sampleTasks(at, gpus, signal) };
  };

  /** One scan of /proc for every Task, and one nvidia-smi call where there is an NVIDIA GPU; nothing at all while no Task runs. */
  const sampleTasks = async (at: number, gpus: readonly GpuDevice[], signal: AbortSignal): Promise<TaskSample[]> => {
    const running = runners().slice(0, MAX_TASKS_PER_SAMPLE);
    if (running.length === 0) {
      meter.measure([], new Map(), at);
      scanner.forget();
      return [];
    }
    const [processes, gpuMemory] = await Promise.all([scanner.scan(running.map((r) => r.pid)), gpus.some((g) => g.vendor === 'nvidia') ? probeGpuProcessMemory(present().nvidiaSmi, signal) : null]);
    const trees = meter.measure(processes, new Map(running.map((r) => [r.runId, r.pid])), at);
    scanner.keep([...trees.values()].flatMap((tree) => tree.pids));
    const found: TaskSample[] = [];
    for (const runner of running) {
      const tree = trees.get(runner.runId);
      if (!tree) continue; // the runner ended since the run table was asked
      const gpuMemoryBytes = gpuMemory === null ? null : tree.pids.reduce((sum, pid) => sum + (gpuMemory.get(pid) ?? 0), 0);
      found.push({ taskId: runner.taskId, runId: runner.runId, cpuPercent: tree.cpuPercent, rssBytes: tree.rssBytes, gpuMemoryBytes, processes: tree.pids.length });
    }
    return found;
  };

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      const started = Date.now();
      sampling = new AbortController();
      inFlight = sample(sampling.signal)
        .then((s) => {
          if (!stopped) ring.push(s);
        })
        .catch((err: unknown) => console.error('taskyard: a machine history sample failed', err))
        .finally(() => schedule(Math.max(0, settings.interval_ms - (Date.now() - started))));
    }, delayMs);
    timer.unref();
  };
  schedule(settings.interval_ms);

  return {
    read,
    stop: async () => {
      stopped = true;
      sampling.abort();
      clearTimeout(timer);
      await inFlight;
    },
  };
}
