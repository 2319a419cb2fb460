import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { ExecutorSection } from '../../schemas/config.js';

/**
 * What the schema cannot say of `executor.rest`, as lines a person can act on: where slurmrestd
 * is (exactly one of url and socket), the token (at most one of token and token_file; the file a
 * non-empty one that other users cannot read, since it acts as its user on the whole cluster),
 * and the sbatch-only settings that have no REST meaning. No line quotes a token.
 */
export function slurmRestProblems(executor: ExecutorSection): string[] {
  const rest = executor.rest;
  if (!rest) return [];
  const problems: string[] = [];
  if (executor.kind !== 'slurm') problems.push(`executor.rest applies only to executor.kind: slurm (it is ${executor.kind})`);
  if (rest.url !== undefined && rest.socket !== undefined) problems.push('executor.rest has both url and socket: give one (where slurmrestd listens)');
  if (rest.url === undefined && rest.socket === undefined) problems.push('executor.rest needs url (http://host:port of slurmrestd) or socket (the path of its unix socket)');
  if (rest.url !== undefined) problems.push(...urlProblems(rest.url));
  if (rest.socket !== undefined && !isAbsolute(rest.socket)) problems.push(`executor.rest.socket must be an absolute path: ${JSON.stringify(rest.socket)}`);
  if (rest.token !== undefined && rest.token_file !== undefined) problems.push('executor.rest has both token and token_file: give one');
  if (rest.token_file !== undefined) problems.push(...tokenFileProblems(rest.token_file));
  if (executor.sbatch_args.length > 0) problems.push('executor.sbatch_args applies to sbatch only: with executor.rest, use partition and account (or drop rest to use the commands)');
  return problems;
}

function urlProblems(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [`executor.rest.url is not a URL: ${JSON.stringify(value)} (write http://host:port)`];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [`executor.rest.url must be http:// or https://, not ${url.protocol}`];
  if (url.username || url.password) return ['executor.rest.url must not carry credentials: give the token in token or token_file'];
  if (url.pathname !== '/' || url.search || url.hash) return [`executor.rest.url is where slurmrestd listens, without a path: write ${url.origin}`];
  return [];
}

function tokenFileProblems(file: string): string[] {
  const named = `executor.rest.token_file ${file}`;
  let mode: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return [`${named} is not a regular file`];
    mode = stat.mode;
  } catch (err) {
    return [`${named} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`];
  }
  if ((mode & 0o007) !== 0) return [`${named} may be read or written by other users (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): chmod o-rwx it`];
  try {
    if (tokenOf(readFileSync(file, 'utf8')) === '') return [`${named} is empty (write the token \`scontrol token\` prints into it)`];
  } catch (err) {
    return [`${named} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`];
  }
  return [];
}

/** A token file's token: its text without surrounding space, or what follows `SLURM_JWT=` as `scontrol token` prints it. */
export function tokenOf(text: string): string {
  const trimmed = text.trim();
  return trimmed.startsWith('SLURM_JWT=') ? trimmed.slice('SLURM_JWT='.length) : trimmed;
}
