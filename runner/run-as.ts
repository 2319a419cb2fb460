import { chownSync, lchownSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// Only node built-ins here: it is bundled into the runner.

/**
 * Becomes the user of `service.run_as` (TASKYARD_RUN_AS=`uid:gid`), before any Task or plugin code
 * loads: that code then cannot read the service's files (`.taskyard/token`) nor its `/proc` entry.
 * `ownDir` (a run's directory, made by the service) and its files are handed to that user first,
 * so the run can still write its records and artifacts. Does nothing without the variable or when
 * already that user; throws (the run fails, saying why) when the process cannot change user.
 */
export function becomeRunAsUser(ownDir?: string): void {
  const wanted = process.env['TASKYARD_RUN_AS'];
  if (!wanted) return;
  const [uid, gid] = wanted.split(':').map(Number) as [number, number];
  if (process.getuid!() === uid) return;
  if (process.getuid!() !== 0) throw new Error(`cannot run as uid ${uid}: the runner runs as uid ${process.getuid!()}, not root`);
  if (ownDir !== undefined) {
    chownSync(ownDir, uid, gid);
    for (const name of readdirSync(ownDir)) lchownSync(join(ownDir, name), uid, gid);
  }
  process.setgroups!([gid]);
  process.setgid!(gid);
  process.setuid!(uid);
}
