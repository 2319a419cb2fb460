import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

/** Commit and branch of the package's own checkout; null when unknown. */
export interface GitInfo {
  git_commit: string | null;
  git_branch: string | null;
}

const UNKNOWN: GitInfo = Object.freeze({ git_commit: null, git_branch: null });
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

const text = (path: string) => readFile(path, 'utf8').then((s) => s.trim(), () => null);

/** The git directory of a checkout whose top level is `root`: its `.git` folder, or the one a worktree's `.git` file names. */
async function gitDirOf(root: string): Promise<string | null> {
  const dotGit = join(root, '.git');
  const kind = await stat(dotGit).catch(() => null);
  if (kind?.isDirectory()) return dotGit;
  if (!kind?.isFile()) return null;
  const named = /^gitdir: (.+)$/m.exec((await text(dotGit)) ?? '')?.[1]?.trim();
  return named ? resolve(root, named) : null;
}

/** The commit a ref names: its loose file (in the worktree's git directory, then the shared one), else its line in packed-refs. */
async function resolveRef(gitDir: string, commonDir: string, ref: string): Promise<string | null> {
  for (const dir of gitDir === commonDir ? [gitDir] : [gitDir, commonDir]) {
    const loose = await text(join(dir, ref));
    if (loose !== null) return loose;
  }
  for (const line of ((await text(join(commonDir, 'packed-refs'))) ?? '').split('\n')) {
    const [commit, name] = line.split(' ');
    if (name === ref && commit) return commit;
  }
  return null;
}

/**
 * Which commit and branch `root` is checked out at, read from its git files once at start. Not by
 * running git: spawning a child from the service process cost each start ~50-80 ms of CPU, more
 * than all else the machine facts need. An installed package usually has no checkout, and one
 * inside somebody else's repository must not report theirs, so `root` itself must hold `.git`.
 * A detached HEAD has no branch.
 */
export async function readGitInfo(root: string): Promise<GitInfo> {
  try {
    const gitDir = await gitDirOf(root);
    if (!gitDir) return UNKNOWN;
    const common = await text(join(gitDir, 'commondir'));
    const commonDir = common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
    const head = await text(join(gitDir, 'HEAD'));
    if (!head) return UNKNOWN;
    const ref = /^ref: (refs\/.+)$/.exec(head)?.[1];
    const commit = ref ? await resolveRef(gitDir, commonDir, ref) : head;
    return {
      git_commit: commit && COMMIT.test(commit) ? commit : null,
      git_branch: ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
    };
  } catch {
    return UNKNOWN;
  }
}
