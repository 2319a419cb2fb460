import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Commit and branch of the package's own checkout; null when unknown. */
export interface GitInfo {
  git_commit: string | null;
  git_branch: string | null;
}

const UNKNOWN: GitInfo = Object.freeze({ git_commit: null, git_branch: null });

/**
 * Asks git once (at start) which commit and branch `root` is checked out at. An installed package
 * usually has no checkout, and one inside somebody else's repository must not report theirs, so
 * the repository's top level has to be `root` itself. A detached HEAD has no branch.
 */
export async function readGitInfo(root: string): Promise<GitInfo> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--show-toplevel', 'HEAD', '--abbrev-ref', 'HEAD'], { cwd: root, timeout: 5_000 });
    const [top, commit, branch] = stdout.split('\n').map((l) => l.trim());
    if (!top || !commit || (await realpath(top)) !== (await realpath(root))) return UNKNOWN;
    return { git_commit: /^[0-9a-f]{7,64}$/.test(commit) ? commit : null, git_branch: branch && branch !== 'HEAD' ? branch : null };
  } catch {
    return UNKNOWN;
  }
}
