import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { waitFor } from './wait-for.js';
import { closedPort } from '../../harness/http-server.js';
import { countCpu } from './cpu-probe.js';

const exec = promisify(execFile);
const SCRIPTS = fileURLToPath(new URL('../../../scripts/', import.meta.url));

/** A one-node Slurm cluster brought up by scripts/slurm-up.sh in a scratch directory. */
export interface SlurmCluster {
  /** Its slurm.conf: clients find the cluster through SLURM_CONF. */
  readonly conf: string;
  readonly dir: string;
  /** Runs a Slurm client command against this cluster; answers stdout. */
  run(command: string, args: string[]): Promise<string>;
  /** Stops slurmctld by its pid (a controller outage). */
  stopController(): Promise<void>;
  /** Starts slurmctld again, and waits until it answers. */
  startController(): Promise<void>;
  /** slurmrestd (JWT over TCP) where startSlurm was asked for it: `executor.rest` for the service. */
  readonly rest: { readonly url: string; readonly token_file: string } | null;
}

/** Why slurmrestd cannot run here (on top of slurmUnavailable), or null when it can. */
export function slurmRestUnavailable(): string | null {
  const jwt = '/usr/lib/x86_64-linux-gnu/slurm-wlm/auth_jwt.so';
  if (spawnSync('sh', ['-c', `command -v slurmrestd && test -e ${jwt}`]).status !== 0) return 'slurmrestd or its JWT plugin is not installed (apt-get install slurmrestd slurm-wlm-jwt-plugin)';
  return slurmUnavailable();
}

/** Why the Slurm tests cannot run here, or null when they can. */
export function slurmUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'the Slurm tests bring up daemons as root; this process is not root';
  for (const tool of ['slurmctld', 'slurmd', 'sbatch', 'munged']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed (apt-get install slurmctld slurmd slurm-client munge)`;
  }
  return null;
}

async function pidOf(dir: string, name: string): Promise<number> {
  return Number((await readFile(join(dir, `${name}.pid`), 'utf8')).trim());
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Brings a cluster up for the test file (on free ports, with `cpus` declared CPUs) and stops its
 * daemons by pid and removes the scratch directory at the end.
 */
export async function startSlurm(t: Test, cpus = 2, opts: { rest?: boolean } = {}): Promise<SlurmCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-slurm-'));
  t.teardown(async () => {
    // The daemons left this process's tree: their CPU (and the jobs slurmd ran) is read before they stop.
    for (const name of ['slurmrestd', 'slurmd', 'slurmctld', 'munged']) countCpu(await pidOf(dir, name).catch(() => 0));
    await exec(join(SCRIPTS, 'slurm-down.sh'), [dir]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  const restPort = String(await closedPort());
  const env = { ...process.env, SLURMCTLD_PORT: String(await closedPort()), SLURMD_PORT: String(await closedPort()), SLURMRESTD_PORT: restPort, SLURM_REST: opts.rest ? '1' : '0' };
  await exec(join(SCRIPTS, 'slurm-up.sh'), [dir, String(cpus)], { env });
  const conf = join(dir, 'slurm.conf');
  const run = async (command: string, args: string[]) => (await exec(command, args, { env: { ...process.env, SLURM_CONF: conf } })).stdout;
  return {
    conf,
    dir,
    run,
    rest: opts.rest ? { url: `http://127.0.0.1:${restPort}`, token_file: join(dir, 'rest.token') } : null,
    async stopController() {
      const pid = await pidOf(dir, 'slurmctld');
      countCpu(pid);
      process.kill(pid, 'SIGTERM');
      await waitFor(() => !alive(pid), 15_000, 'slurmctld to stop');
    },
    async startController() {
      await exec('/usr/sbin/slurmctld', ['-f', conf]);
      // The node answers idle, or mixed / allocated while jobs survived the outage.
      await waitFor(async () => /idle|mixed|allocated/.test(await run('sinfo', ['-h', '-o', '%T']).catch(() => '')), 20_000, 'slurmctld to answer');
    },
  };
}
