import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { waitFor } from './wait-for.js';
import { slurmUnavailable } from './slurm.js';

const exec = promisify(execFile);
const SCRIPTS = fileURLToPath(new URL('../../../scripts/', import.meta.url));
/** Whether nothing listens on `port` of any host address now. */
function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/**
 * A free pair of ports for slurmctld and slurmd in 7200-7299, the multi-node tests' range (clear of
 * the one-node tests' free ports and the REST tests' 7100-7199), so clusters can run side by side.
 */
async function freePortPair(): Promise<[number, number]> {
  for (let tries = 0; tries < 100; tries++) {
    const port = 7200 + 2 * Math.floor(Math.random() * 50);
    if ((await isFree(port)) && (await isFree(port + 1))) return [port, port + 1];
  }
  throw new Error('no free pair of ports in 7200-7299');
}

/** A cluster of several slurmd nodes, each in its own network namespace (scripts/slurm-cluster-up.sh). */
export interface SlurmMultiCluster {
  readonly conf: string;
  readonly dir: string;
  /** Node names, in order; the last one has two (fake) GPUs. */
  readonly nodes: readonly string[];
  run(command: string, args: string[]): Promise<string>;
  /** The node a job runs on (squeue %N), once it runs. */
  nodeOf(jobId: string): Promise<string>;
  /** Kills every process in the node's namespace at once (slurmd, slurmstepd, the job): the node dies. */
  killNode(node: string): Promise<void>;
  /** Starts the node's slurmd again and waits until Slurm takes it back (ReturnToService=2). */
  startNode(node: string): Promise<void>;
}

/** Why the multi-node tests cannot run here (not root, Slurm missing, no network namespaces), or null. */
export function clusterUnavailable(): string | null {
  const slurm = slurmUnavailable();
  if (slurm) return slurm;
  const probe = `typrobe${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `this machine cannot make network namespaces (ip netns add: ${(made.stderr || made.error?.message || '').trim()})`;
  spawnSync('ip', ['netns', 'del', probe]);
  return null;
}

/** Pids of the processes in a network namespace (`ip netns pids`). */
async function pidsIn(node: string): Promise<number[]> {
  const { stdout } = await exec('ip', ['netns', 'pids', node]).catch(() => ({ stdout: '' }));
  return stdout.split('\n').filter((line) => line.trim() !== '').map(Number);
}

/**
 * Brings up `nodes` nodes for the test file; at its end, slurm-cluster-down.sh stops every process
 * the cluster started (by pid, namespace by namespace) and deletes the namespaces, links and the
 * scratch directory, whether the tests passed or not.
 */
export async function startSlurmCluster(t: Test, nodes = 3): Promise<SlurmMultiCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-cluster-'));
  const down = async () => {
    await exec(join(SCRIPTS, 'slurm-cluster-down.sh'), [dir]).catch((err: Error) => console.error(`slurm-cluster-down.sh ${dir}: ${err.message}`));
    await rm(dir, { recursive: true, force: true });
  };
  t.teardown(down);
  const [ctldPort, slurmdPort] = await freePortPair();
  const env = { ...process.env, SLURMCTLD_PORT: String(ctldPort), SLURMD_PORT: String(slurmdPort) };
  await exec(join(SCRIPTS, 'slurm-cluster-up.sh'), [dir, String(nodes)], { env });
  const conf = join(dir, 'slurm.conf');
  const names = /^NODE_NAMES=(.*)$/m.exec(await readFile(join(dir, 'cluster.env'), 'utf8'))![1]!.split(',');
  const run = async (command: string, args: string[]) => (await exec(command, args, { env: { ...process.env, SLURM_CONF: conf } })).stdout;
  const stateOf = async (node: string) => (await run('sinfo', ['-h', '-N', '-n', node, '-o', '%T']).catch(() => '')).trim();
  return {
    conf,
    dir,
    nodes: names,
    run,
    nodeOf: (jobId) => waitFor(async () => (await run('squeue', ['-h', '-j', jobId, '-t', 'running', '-o', '%N'])).trim(), 30_000, `job ${jobId} to run on a node`),
    async killNode(node) {
      for (const pid of await pidsIn(node)) process.kill(pid, 'SIGKILL');
      await waitFor(async () => (await pidsIn(node)).length === 0, 10_000, `the processes of ${node} to die`);
    },
    async startNode(node) {
      await exec('nsenter', [`--net=/run/netns/${node}`, '/usr/sbin/slurmd', '-f', conf, '-N', node], { env: { ...process.env, SLURM_CONF: conf } });
      await waitFor(async () => /^(idle|mixed|allocated)$/.test(await stateOf(node)), 60_000, `${node} to be back`);
    },
  };
}
