import type { GpuDevice } from '../../schemas/machine.js';

const MiB = 1024 * 1024;

/** The nvidia-smi columns `parseNvidiaSmi` expects, in order. */
export const NVIDIA_QUERY_FIELDS = ['index', 'name', 'uuid', 'memory.total', 'memory.used', 'utilization.gpu', 'temperature.gpu'] as const;

/** A number from a tool's text, or null for `[N/A]`, `[Not Supported]`, `N/A` and the like. */
function numberOrNull(text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = Number.parseFloat(text.trim());
  return Number.isFinite(value) ? value : null;
}

function bytesOrNull(value: number | null, unit: number): number | null {
  return value === null ? null : Math.round(value * unit);
}

/**
 * Parses `nvidia-smi --query-gpu=<NVIDIA_QUERY_FIELDS> --format=csv,noheader,nounits`: one line
 * per device, memory in MiB. The name is rebuilt from the middle columns in case it holds a comma.
 */
export function parseNvidiaSmi(text: string): GpuDevice[] {
  const devices: GpuDevice[] = [];
  for (const line of text.split('\n')) {
    const parts = line.split(',').map((p) => p.trim());
    if (parts.length < NVIDIA_QUERY_FIELDS.length) continue;
    const index = numberOrNull(parts[0]);
    if (index === null || !Number.isInteger(index)) continue;
    const [uuid, total, used, utilization, temperature] = parts.slice(-5);
    const name = parts.slice(1, -5).join(', ');
    devices.push({
      vendor: 'nvidia',
      index,
      name: name || null,
      uuid: uuid && uuid.startsWith('GPU-') ? uuid : null,
      memory_total_bytes: bytesOrNull(numberOrNull(total), MiB),
      memory_used_bytes: bytesOrNull(numberOrNull(used), MiB),
      utilization_percent: numberOrNull(utilization),
      temperature_celsius: numberOrNull(temperature),
    });
  }
  return devices;
}

type RocmCard = Record<string, unknown>;

/** The first of `keys` present on the card, matched case-insensitively (rocm-smi versions differ in case). */
function field(card: RocmCard, ...keys: string[]): string | undefined {
  const lower = new Map(Object.entries(card).map(([k, v]) => [k.toLowerCase(), v]));
  for (const key of keys) {
    const value = lower.get(key.toLowerCase());
    if (typeof value === 'string' || typeof value === 'number') return String(value);
  }
  return undefined;
}

/** Parses `rocm-smi --showproductname --showmeminfo vram --showuse --showtemp --showuniqueid --json`. */
export function parseRocmSmi(text: string): GpuDevice[] {
  // Some versions print warnings before the JSON document.
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(start, end + 1));
  } catch {
    return [];
  }
  if (typeof doc !== 'object' || doc === null) return [];
  const devices: GpuDevice[] = [];
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    const index = /^card(\d+)$/i.exec(key)?.[1];
    if (index === undefined || typeof value !== 'object' || value === null) continue;
    const card = value as RocmCard;
    devices.push({
      vendor: 'amd',
      index: Number(index),
      name: field(card, 'Card Series', 'Device Name', 'Card Model') ?? null,
      uuid: field(card, 'Unique ID', 'GUID') ?? null,
      memory_total_bytes: bytesOrNull(numberOrNull(field(card, 'VRAM Total Memory (B)')), 1),
      memory_used_bytes: bytesOrNull(numberOrNull(field(card, 'VRAM Total Used Memory (B)')), 1),
      utilization_percent: numberOrNull(field(card, 'GPU use (%)')),
      temperature_celsius: numberOrNull(field(card, 'Temperature (Sensor edge) (C)', 'Temperature (Sensor junction) (C)')),
    });
  }
  return devices.sort((a, b) => a.index - b.index);
}

/**
 * Parses `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`: GPU
 * memory (MiB) by process, summed where a process uses several GPUs.
 */
export function parseComputeApps(text: string): Map<number, number> {
  const bytes = new Map<number, number>();
  for (const line of text.split('\n')) {
    const [pidText, usedText] = line.split(',');
    const pid = numberOrNull(pidText);
    const used = numberOrNull(usedText);
    if (pid === null || !Number.isInteger(pid) || used === null) continue;
    bytes.set(pid, (bytes.get(pid) ?? 0) + used * MiB);
  }
  return bytes;
}
