import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseComputeApps, parseNvidiaSmi, parseRocmSmi } from '../../supervisor/machine/gpu-parse.js';
import { probeGpus } from '../../supervisor/machine/gpu-probe.js';
import { NVIDIA_H100_PAIR, NVIDIA_NO_DRIVER, NVIDIA_WITH_NA, ROCM_5_MI250X, ROCM_6_MI300X } from './gpu-samples.js';

const MiB = 1024 * 1024;

t.test('nvidia-smi CSV', async (t) => {
  t.same(parseNvidiaSmi(NVIDIA_H100_PAIR), [
    { vendor: 'nvidia', index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-4b1a7d0e-2f5c-8e7a-93d1-6c0f3b2a9e17', memory_total_bytes: 81559 * MiB, memory_used_bytes: 4 * MiB, utilization_percent: 0, temperature_celsius: 32 },
    { vendor: 'nvidia', index: 1, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-9e3c5a21-7b4d-1f6e-a08c-2d5b7e9f1c43', memory_total_bytes: 81559 * MiB, memory_used_bytes: 61440 * MiB, utilization_percent: 97, temperature_celsius: 58 },
  ]);
  const na = parseNvidiaSmi(NVIDIA_WITH_NA);
  t.match(na, [
    { index: 0, name: 'NVIDIA A100-SXM4-40GB', utilization_percent: null, temperature_celsius: 29 },
    { index: 1, name: 'Tesla T4', utilization_percent: 12, temperature_celsius: null, memory_used_bytes: 1024 * MiB },
  ]);
  t.same(parseNvidiaSmi(NVIDIA_NO_DRIVER), [], 'an error text gives no devices');
  t.same(parseNvidiaSmi(''), []);
  t.equal(parseNvidiaSmi('3, Board, with comma, GPU-x, 100, 1, 2, 3\n')[0]?.name, 'Board, with comma', 'a comma in the name survives');
});

t.test('rocm-smi JSON, old and new key spellings', async (t) => {
  t.same(parseRocmSmi(ROCM_5_MI250X), [
    { vendor: 'amd', index: 0, name: 'AMD INSTINCT MI250X', uuid: '0x1c3d2a5f6e7b8c9d', memory_total_bytes: 68702699520, memory_used_bytes: 10960896, utilization_percent: 0, temperature_celsius: 34 },
    { vendor: 'amd', index: 1, name: 'AMD INSTINCT MI250X', uuid: '0x5e6f7a8b9c0d1e2f', memory_total_bytes: 68702699520, memory_used_bytes: 34351349760, utilization_percent: 88, temperature_celsius: 41 },
  ]);
  t.same(parseRocmSmi(ROCM_6_MI300X), [
    { vendor: 'amd', index: 0, name: 'AMD Instinct MI300X', uuid: '0x8a7b6c5d4e3f2a1b', memory_total_bytes: 205822885888, memory_used_bytes: 302559232, utilization_percent: 3, temperature_celsius: 46 },
  ]);
  t.same(parseRocmSmi('ERROR: No AMD GPUs specified'), []);
  t.same(parseRocmSmi('{not json}'), []);
});

t.test('detection runs the real commands and tolerates their absence', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-gpu-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const missing = join(dir, 'no-such-command');
  t.same(await probeGpus({ nvidiaSmi: missing, rocmSmi: missing }), [], 'missing commands give []');
  t.same(await probeGpus({ nvidiaSmi: 'false', rocmSmi: 'false' }), [], 'failing commands give []');

  // Stand-in executables that print the recorded outputs: the probe really spawns them.
  const script = async (name: string, output: string, code = 0) => {
    const file = join(dir, name);
    await writeFile(file, `#!/bin/sh\ncat <<'SAMPLE'\n${output}SAMPLE\nexit ${code}\n`);
    await chmod(file, 0o755);
    return file;
  };
  const nvidia = await script('nvidia-smi', NVIDIA_H100_PAIR);
  const rocm = await script('rocm-smi', ROCM_6_MI300X);
  const broken = await script('nvidia-smi-broken', NVIDIA_NO_DRIVER, 9);
  const both = await probeGpus({ nvidiaSmi: nvidia, rocmSmi: rocm });
  t.same(both.map((g) => `${g.vendor}:${g.index}`), ['nvidia:0', 'nvidia:1', 'amd:0']);
  t.same(await probeGpus({ nvidiaSmi: broken, rocmSmi: missing }), [], 'a driver failure gives []');
});

t.test('nvidia-smi compute apps: GPU memory by process, summed over GPUs', async (t) => {
  const text = '4242, 1024\n4242, 512\n77, [N/A]\n\nnot a line\n99, 8\n';
  t.same([...parseComputeApps(text)], [[4242, 1536 * 1024 * 1024], [99, 8 * 1024 * 1024]], 'a process on two GPUs sums; [N/A] and junk are skipped');
  t.same([...parseComputeApps('')], [], 'no compute process: an empty map');
});
