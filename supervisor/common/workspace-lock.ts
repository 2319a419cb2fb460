import { createHash, randomBytes } from 'node:crypto';
import { link, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isAlive, readProcess } from '../../workers/process-tree.js';
import { readRegularFile, UnsafeFileError } from '../../workers/safe-file.js';
import { ensurePrivateDir } from './private-state.js';
import { STATE_DIR } from './token-store.js';

/** Who holds a workspace: the content of the lock file. */
export interface LockHolder {
  pid: number;
  /** Start time of `pid` from /proc/<pid>/stat: a pid alone may belong to a later process. */
  start_time: string | null;
  /** The service's address, once it listens (null until then). */
  address: string | null;
  started_at: string;
}

/** A second service on a workspace: the message names the running one. */
export class WorkspaceInUseError extends Error {
  constructor(
    readonly workspace: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.address ?? 'address not known yet: it is still starting';
    super(`the workspace ${workspace} is in use by another taskyard service (pid ${holder.pid}, ${where}); stop it first or choose another --workspace`);
    this.name = 'WorkspaceInUseError';
  }
}

/** The lock of a running service; held until `release`. */
export interface WorkspaceLock {
  /** Records the address once the service listens (best effort: the lock holds without it). */
  setAddress(address: string): Promise<void>;
  /** Removes the lock file if it is still this service's. */
  release(): Promise<void>;
}

const LOCK_FILE = 'service.lock';
/** A starter waiting on another's take-over gives up after this many rounds (a few seconds). */
const ATTEMPTS = 200;

/**
 * The file's text, or undefined when it does not exist; a link or FIFO in its place reads as ''
 * (no live holder). Any other error (a lock another user's service keeps unreadable) is thrown:
 * what cannot be read is not taken over.
 */
async function readText(file: string): Promise<string | undefined> {
  try {
    return (await readRegularFile(file)).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof UnsafeFileError) return '';
    throw err;
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    const ok = Number.isInteger(h.pid) && h.pid! > 0 && (h.start_time === null || typeof h.start_time === 'string') &&
      (h.address === null || typeof h.address === 'string') && typeof h.started_at === 'string';
    return ok ? (h as LockHolder) : null;
  } catch {
    return null;
  }
}

/** Damaged content has no live holder; a holder counts only with the same pid and start time. */
async function liveHolder(text: string): Promise<LockHolder | null> {
  const holder = parseHolder(text);
  return holder && (await isAlive(holder.pid, holder.start_time ?? undefined)) ? holder : null;
}

/**
 * The service running on the workspace, as its lock says (the CLI's way to find a service on a
 * non-default port); undefined when none runs: no lock, an unreadable or damaged one, or one left
 * by a service that died (its pid gone or now another process's).
 */
export async function runningService(workspace: string): Promise<LockHolder | undefined> {
  const text = await readText(join(workspace, STATE_DIR, LOCK_FILE)).catch(() => undefined);
  return (text && (await liveHolder(text))) || undefined;
}

/** A unique temporary name beside the lock; written files are moved or linked into place. */
const tempFile = (dir: string) => join(dir, `.${LOCK_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);

/**
 * Creates `file` holding `text`, atomically and only if it does not exist: the text goes to a
 * temporary file that is then hard-linked to the name (link fails with EEXIST), so nobody ever
 * reads a half-written lock.
 */
async function createExclusive(dir: string, file: string, text: string): Promise<boolean> {
  const temp = tempFile(dir);
  await writeFile(temp, text, { mode: 0o600 });
  try {
    await link(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** The n-th ticket for taking over the stale lock whose content is `stale`, in the state dir `dir`. */
export function takeoverTicket(dir: string, stale: string, n: number): string {
  return join(dir, `${LOCK_FILE}.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 16)}-${n}`);
}

/**
 * Removes the stale lock whose content is `stale`, race-free. Starters that saw the same stale
 * lock compete for a ticket named after its content (exclusive create); only the ticket holder
 * may delete, and only if the lock still has that content (nobody else changes a dead holder's
 * lock). A ticket whose holder died is skipped for the next number, so a crash during the
 * take-over blocks nobody. Answers false when another live starter holds the ticket.
 */
async function removeStale(dir: string, file: string, stale: string, me: string): Promise<boolean> {
  const ticket = (n: number) => takeoverTicket(dir, stale, n);
  for (let n = 1; ; n++) {
    if (await createExclusive(dir, ticket(n), me)) {
      try {
        if ((await readText(file)) === stale) await unlink(file).catch(() => undefined);
      } finally {
        for (let k = 1; k <= n; k++) await unlink(ticket(k)).catch(() => undefined);
      }
      return true;
    }
    const text = await readText(ticket(n));
    if (text !== undefined && (await liveHolder(text))) return false;
  }
}

/**
 * Takes the workspace for this service: the lock file `<workspace>/.taskyard/service.lock`,
 * created atomically. A live holder (same pid and process start time) refuses the start with
 * WorkspaceInUseError; a lock left by a dead process, or by a pid now reused, is taken over.
 */
export async function lockWorkspace(workspace: string): Promise<WorkspaceLock> {
  const dir = join(workspace, STATE_DIR);
  const file = join(dir, LOCK_FILE);
  await ensurePrivateDir(dir);
  const self: LockHolder = { pid: process.pid, start_time: (await readProcess(process.pid).catch(() => undefined))?.startTime ?? null, address: null, started_at: new Date().toISOString() };
  const mine = JSON.stringify(self);

  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await createExclusive(dir, file, mine)) return heldLock(file, self, mine);
    const text = await readText(file);
    if (text === undefined) continue; // released meanwhile: try again
    const holder = await liveHolder(text);
    if (holder) throw new WorkspaceInUseError(workspace, holder);
    // Another starter is taking the stale lock over: its lock appears in a moment.
    if (!(await removeStale(dir, file, text, mine))) await delay(20);
  }
  throw new Error(`could not lock the workspace ${workspace}: another taskyard service keeps starting on it (${join(STATE_DIR, LOCK_FILE)})`);
}

/** The lock this service holds; it only ever touches the file while the content is its own. */
function heldLock(file: string, self: LockHolder, written: string): WorkspaceLock {
  let mine = written;
  const stillMine = async () => (await readText(file)) === mine;
  return {
    async setAddress(address) {
      if (!(await stillMine())) return;
      const next = JSON.stringify({ ...self, address });
      const temp = tempFile(dirname(file));
      try {
        // Replaced in one rename: the lock never disappears, so no starter can slip in.
        await writeFile(temp, next, { mode: 0o600 });
        await rename(temp, file);
        mine = next;
      } catch {
        await unlink(temp).catch(() => undefined);
      }
    },
    async release() {
      if (await stillMine()) await unlink(file).catch(() => undefined);
    },
  };
}
