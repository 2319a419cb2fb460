import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { PermissionError } from '../../core/errors.js';
import { STATE_DIR } from '../common/token-store.js';

/** Why a client path was refused; `/files` maps these to HTTP statuses, Jobs answer PermissionError. */
export type UnsafeReason = 'nul' | 'absolute' | 'escape' | 'private' | 'loop';

/** A client path that may not be used. A PermissionError, so Jobs answer `PermissionError: ...`. */
export class UnsafePathError extends PermissionError {
  constructor(
    readonly reason: UnsafeReason,
    message: string,
  ) {
    super(message);
  }
}

/** A client path resolved inside the workspace. */
export interface WorkspacePath {
  /** Normalized workspace-relative path with `/` separators; '' is the root. */
  readonly relative: string;
  /** Absolute path with every existing symbolic link resolved; always inside the root. */
  readonly real: string;
  /** False when some component does not exist (yet). */
  readonly exists: boolean;
}

/** True when `abs` is `root` or below it. Both must be absolute and normalized. */
export function isInside(root: string, abs: string): boolean {
  return abs === root || abs.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** True when `abs` is the service-private directory or below it. */
function isPrivate(root: string, abs: string): boolean {
  return isInside(join(root, STATE_DIR), abs);
}

/**
 * Lexical checks only: refuses NUL bytes, absolute paths and `..` escapes, and returns the
 * normalized relative form ('' for the root; `.` and `./` segments dropped).
 */
export function normalizeClientPath(input: string): string {
  if (input.includes('\0')) throw new UnsafePathError('nul', `path contains a NUL byte: ${JSON.stringify(input)}`);
  if (isAbsolute(input)) throw new UnsafePathError('absolute', `absolute paths are not accepted: ${input}`);
  const normalized = posix.normalize(input === '' ? '.' : input).replace(/\/+$/, '');
  if (normalized === '..' || normalized.startsWith('../')) throw new UnsafePathError('escape', `path escapes the workspace: ${input}`);
  const relativePath = normalized === '.' ? '' : normalized;
  if (relativePath === STATE_DIR || relativePath.startsWith(`${STATE_DIR}/`)) {
    throw new UnsafePathError('private', `path is private to the service: ${input}`);
  }
  return relativePath;
}

/** Refuses a real path outside the root or inside the service-private directory. */
function checkReal(root: string, real: string, input: string): void {
  if (!isInside(root, real)) throw new UnsafePathError('escape', `path escapes the workspace: ${input}`);
  if (isPrivate(root, real)) throw new UnsafePathError('private', `path is private to the service: ${input}`);
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * Resolves a client path inside `root` (itself a real path), following symbolic links: the real
 * path of the deepest existing ancestor decides, so a link to `/etc` or into `.taskyard/` is
 * refused even when the rest does not exist yet. A dangling link whose target lies outside is
 * refused too, so creating the missing part later cannot write through it.
 */
export async function resolveClientPath(root: string, input: string): Promise<WorkspacePath> {
  const rel = normalizeClientPath(input);
  const parts = rel === '' ? [] : rel.split('/');
  for (let n = parts.length; n >= 0; n--) {
    let real: string;
    try {
      real = await realpath(join(root, ...parts.slice(0, n)));
    } catch (err) {
      if (code(err) === 'ELOOP') throw new UnsafePathError('loop', `symbolic link loop in path: ${input}`);
      if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') continue;
      throw err;
    }
    checkReal(root, real, input);
    if (n < parts.length) await refuseDanglingEscape(root, join(real, parts[n]!), input);
    const full = join(real, ...parts.slice(n));
    checkReal(root, full, input);
    return { relative: rel, real: full, exists: n === parts.length };
  }
  throw new UnsafePathError('escape', `path escapes the workspace: ${input}`);
}

/** The first missing component may still be a dangling link: refuse one that points outside. */
async function refuseDanglingEscape(root: string, candidate: string, input: string): Promise<void> {
  let target: string;
  try {
    if (!(await lstat(candidate)).isSymbolicLink()) return;
    target = await readlink(candidate);
  } catch {
    return;
  }
  checkReal(root, resolve(dirname(candidate), target), input);
}

/**
 * Resolves the parent of a client path but not its last component, for operations on the entry
 * itself (deleting a link removes the link). The entry, if it is a link, must still lead inside.
 * Returns `null` for the root.
 */
export async function resolveEntryPath(root: string, input: string): Promise<(WorkspacePath & { name: string }) | null> {
  const rel = normalizeClientPath(input);
  if (rel === '') return null;
  const name = posix.basename(rel);
  const parent = await resolveClientPath(root, posix.dirname(rel) === '.' ? '' : posix.dirname(rel));
  const entry = join(parent.real, name);
  checkReal(root, entry, input);
  const stat = await lstat(entry).catch(() => null);
  if (stat?.isSymbolicLink()) await resolveClientPath(root, rel);
  return { relative: rel, real: entry, exists: stat !== null, name };
}

/** Workspace-relative form of an absolute path below the root, with `/` separators. */
export function toRelative(root: string, abs: string): string {
  return relative(root, abs).split(sep).join('/');
}
