import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NVIDIA_H100_PAIR } from './gpu-samples.js';

/** A marker in a burning command's line: the fixture nvidia-smi reports GPU memory for the processes that carry it. */
export const MARKER = 'taskyard-history-burn';
export const GPU_MIB_PER_PROCESS = 2048;

/**
 * A stand-in nvidia-smi: the H100 pair for --query-gpu, and for --query-compute-apps every
 * process whose command line holds MARKER, each with GPU_MIB_PER_PROCESS MiB.
 */
export async function fixtureNvidiaSmi(dir: string): Promise<string> {
  const file = join(dir, 'nvidia-smi');
  await writeFile(
    file,
    `#!/bin/sh
case "$1" in
  --query-compute-apps=*)
    grep -las '${MARKER}-[0-9]' /proc/[0-9]*/cmdline | sed -n 's#^/proc/\\([0-9]*\\)/cmdline$#\\1, ${GPU_MIB_PER_PROCESS}#p' ;;
  *) printf '%s' '${NVIDIA_H100_PAIR}' ;;
esac
`,
  );
  await chmod(file, 0o755);
  return file;
}

/** A Python command that keeps one core busy and carries MARKER (number `n`) in its command line. */
export function burnArgv(n: number): string[] {
  return ['python3', '-c', `# ${MARKER}-${n}\nwhile True: pass`];
}
