import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { MachineInfo } from '../../schemas/machine.js';
import { check } from '../../schemas/validator.js';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../../core/build-info.js';
import { readGitInfo } from '../../supervisor/machine/git-info.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService } from '../helpers/service.js';

const svc = await startTestService(t);

function assertMachineInfo(t: Test, answer: unknown): void {
  const checked = check(MachineInfo, answer);
  t.ok(checked.ok, `MachineInfo shape: ${checked.ok ? '' : JSON.stringify(checked.issues)}`);
  if (!checked.ok) return;
  const info = checked.value;
  t.same(Object.keys(info).sort(), ['axonx', 'cpu', 'gpu_leases', 'gpus', 'memory']);
  t.equal(info.axonx.version, PACKAGE_VERSION);
  t.ok(info.cpu.usage_percent >= 0 && info.cpu.usage_percent <= 100);
  t.ok(info.cpu.total_cores === null || info.cpu.total_cores >= 1);
  t.ok(info.memory.total_bytes > 0 && info.memory.used_bytes + info.memory.available_bytes === info.memory.total_bytes);
  t.ok(info.memory.usage_percent >= 0 && info.memory.usage_percent <= 100);
}

t.test('machine_status over HTTP JSON, SSE and MCP', async (t) => {
  const json = await svc.call('machine_status');
  t.equal(json.status, 200);
  t.equal(json.body.success, true);
  assertMachineInfo(t, json.body.answer);

  const sse = await svc.events('machine_status');
  t.equal(sse.events.at(-1)?.['kind'], 'result');
  assertMachineInfo(t, sse.events.at(-1)?.['answer']);

  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'machine_status', arguments: {} });
  t.equal(result.isError, false);
  assertMachineInfo(t, (result.structuredContent as { answer: unknown }).answer);
  t.equal((await svc.call('machine_status', { extra: true })).status, 422, 'no arguments accepted');
});

t.test('build info comes from the package checkout', async (t) => {
  const { body } = await svc.call('machine_status');
  const build = body.answer.axonx;
  t.same(build, { version: PACKAGE_VERSION, ...(await readGitInfo(PACKAGE_ROOT)) });
  let head: string | null = null;
  try {
    head = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], { cwd: PACKAGE_ROOT, encoding: 'utf8', stdio: 'pipe' }).split('\n')[1] ?? null;
  } catch {
    // Not a checkout (an installed package): build info must then be null.
  }
  t.equal(build.git_commit, head);
});

t.test('git info: repository top level only, detached HEAD has no branch', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-git-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  t.same(await readGitInfo(dir), { git_commit: null, git_branch: null }, 'not a repository');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8', stdio: 'pipe' }).trim();
  git('init', '-q', '-b', 'trunk');
  git('commit', '-q', '--allow-empty', '-m', 'first');
  const commit = git('rev-parse', 'HEAD');
  t.same(await readGitInfo(dir), { git_commit: commit, git_branch: 'trunk' });
  await mkdir(join(dir, 'nested'));
  t.same(await readGitInfo(join(dir, 'nested')), { git_commit: null, git_branch: null }, "a package inside someone else's repository");
  git('checkout', '-q', '--detach');
  t.same(await readGitInfo(dir), { git_commit: commit, git_branch: null });
  // Read from the git files, not by running git: packed refs, a branch with a slash, a worktree.
  git('checkout', '-q', '-b', 'topic/x');
  git('pack-refs', '--all');
  t.same(await readGitInfo(dir), { git_commit: commit, git_branch: 'topic/x' }, 'a packed ref');
  git('commit', '-q', '--allow-empty', '-m', 'second');
  const second = git('rev-parse', 'HEAD');
  t.same(await readGitInfo(dir), { git_commit: second, git_branch: 'topic/x' }, 'a loose ref over a packed one');
  const tree = `${dir}-tree`;
  t.teardown(() => rm(tree, { recursive: true, force: true }));
  git('worktree', 'add', '-q', '-b', 'side', tree, commit);
  t.same(await readGitInfo(tree), { git_commit: commit, git_branch: 'side' }, 'a worktree (its .git is a file)');
});
