import { execFileSync } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { STATE_DIR } from '../../core/state-dir.js';
import type { Config } from './config.js';

/** The unprivileged user Task code and shell commands run as (`service.run_as`). */
export interface RunAs {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
}

/** How a runner or the plugin describer learns whom to become (runner/run-as.ts reads it). */
export const RUN_AS_VARIABLE = 'TASKYARD_RUN_AS';

/**
 * `service.run_as` checked at start: a user that exists (looked up through NSS, as `getent` does),
 * is not root, and a service that can become them (root). Throws ConfigError naming the field.
 */
export function resolveRunAs(config: Config): RunAs | null {
  const wanted = config.service.run_as;
  if (wanted === null) return null;
  let entry: string;
  try {
    entry = execFileSync('getent', ['passwd', wanted.user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    throw new ConfigError(`service.run_as.user: no user named ${JSON.stringify(wanted.user)} on this machine`);
  }
  const [, , uid, gid] = entry.trim().split(':');
  const runAs = { user: wanted.user, uid: Number(uid), gid: Number(gid) };
  if (!Number.isInteger(runAs.uid) || !Number.isInteger(runAs.gid)) throw new ConfigError(`service.run_as.user: cannot read the ids of ${wanted.user}`);
  if (runAs.uid === 0) throw new ConfigError('service.run_as.user: must be an unprivileged user, not root (uid 0)');
  const own = process.getuid?.() ?? -1;
  if (own !== 0 && own !== runAs.uid) {
    throw new ConfigError(`service.run_as: only a service run by root can run Tasks as ${wanted.user} (this one runs as uid ${own})`);
  }
  return runAs;
}

/** The variable that tells runners and the describer whom to become. */
export function runAsVariables(runAs: RunAs | null | undefined): Record<string, string> {
  return runAs ? { [RUN_AS_VARIABLE]: `${runAs.uid}:${runAs.gid}` } : {};
}

/**
 * With `run_as`, the private directory lets that user pass through (plugin code is under
 * `.taskyard/plugins`) but not list it; what is secret in it (the token) is the service's alone
 * (0600), and so is the service's `/proc` entry (another uid cannot read its environ).
 */
export async function openStateDirForRunAs(workspace: string, runAs: RunAs | null): Promise<void> {
  if (!runAs) return;
  const dir = join(workspace, STATE_DIR);
  await mkdir(dir, { recursive: true, mode: 0o711 });
  await chmod(dir, 0o711);
}
