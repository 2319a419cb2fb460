import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/**
 * Memory-backed when the machine has it: creating thousands of files there costs a third of the CPU
 * it costs on disk, and the service's record writes (each fsynced) cost no disk flush.
 */
export const MEMORY_ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * A fresh directory in memory (/dev/shm, else the temporary directory), removed when `t` ends: for
 * fixtures whose file count is the point (thousands of Task records or entries), made cheaper to
 * write and to read back without changing what is written.
 */
export async function memoryDir(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(MEMORY_ROOT, prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
