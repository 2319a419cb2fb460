import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let known: string | false | undefined;

/**
 * Why a small tmpfs cannot be mounted here (not root, or `mount` refused), or false when it can:
 * tried once per test process. Tests that need a full disk pass it as tap's `skip` option, so the
 * suite reports them as skipped with the reason instead of counting them as passes.
 */
export function tmpfsUnavailable(): string | false {
  if (known !== undefined) return known;
  if (process.getuid?.() !== 0) return (known = 'mounting a tmpfs needs root');
  const dir = mkdtempSync(join(tmpdir(), 'taskyard-tmpfs-probe-'));
  try {
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
    if (mount.status !== 0) return (known = `mount -t tmpfs failed here: ${(mount.stderr || mount.error?.message || `exit ${mount.status}`).trim()}`);
    spawnSync('umount', [dir]);
    return (known = false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
