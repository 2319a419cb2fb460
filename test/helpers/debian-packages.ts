import { spawn } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One apt-get at a time across test files (dpkg takes its own lock and fails rather than wait). */
const LOCK = join(tmpdir(), 'taskyard-apt-install.lock');

export const exists = (path: string) => access(path).then(() => true, () => false);

/** Runs a command to completion; one awaited value with its exit code and the tail of its output. */
export function runCommand(cmd: string, args: string[], cwd?: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => resolve({ code: null, output: String(err) }));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Takes the install lock (a directory: mkdir is atomic), breaking it when its owner is dead. */
async function takeLock(): Promise<boolean> {
  try {
    await mkdir(LOCK);
    await writeFile(join(LOCK, 'pid'), String(process.pid));
    return true;
  } catch {
    const owner = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && !(await exists(`/proc/${owner}`))) await rm(LOCK, { recursive: true, force: true });
    return false;
  }
}

/**
 * Makes sure Debian packages are installed (`present` says whether they are): CI starts on a fresh
 * machine as root, so the first test file that needs them runs `apt-get install -y` while the
 * others wait on the lock. Throws, saying what to run, when they are missing and cannot be installed.
 */
export async function ensureDebianPackages(packages: string[], present: () => Promise<boolean>): Promise<void> {
  if (await present()) return;
  const deadline = Date.now() + 15 * 60_000;
  while (!(await takeLock())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for another test to install ${packages.join(' ')} (lock ${LOCK})`);
    await new Promise((r) => setTimeout(r, 500));
    if (await present()) return;
  }
  try {
    if (await present()) return;
    const install = ['install', '-y', '--no-install-recommends', ...packages];
    if (process.getuid?.() !== 0) throw new Error(`${packages.join(' ')} missing and installing needs root: run \`apt-get ${install.join(' ')}\` (Debian) first`);
    let result = await runCommand('apt-get', install);
    if (result.code !== 0) {
      await runCommand('apt-get', ['update']);
      result = await runCommand('apt-get', install);
    }
    if (result.code !== 0 || !(await present())) throw new Error(`could not install ${packages.join(' ')} with apt-get (exit ${result.code}):\n${result.output}`);
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}
