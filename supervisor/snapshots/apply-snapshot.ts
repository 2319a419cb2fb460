import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FileExistsError, ValueError } from '../errors.js';
import { resolveEntryPath } from '../workspace/safe-path.js';
import type { UnpackedSnapshot } from './unpack-snapshot.js';

/** What applying a snapshot needs to know about live Tasks, answered by the task system. */
export interface TaskGuard {
  /** True while the Task is queued or running (a managed worker, or a record that says so). */
  isActive(taskId: string): Promise<boolean>;
  /** Why a staged Task directory cannot be applied (no terminal, matching status.json), or null. */
  problemOf(dir: string, taskId: string, taskType: string): Promise<string | null>;
  /** Re-reads these Task directories after they changed on disk. */
  refresh(taskIds: readonly string[]): Promise<void>;
}

export interface ApplyRequest {
  workspace: string;
  /** Private scratch directory on the workspace's file system, for backups. */
  scratch: string;
  snapshot: UnpackedSnapshot | null;
  /** Task IDs to delete, already validated and free of duplicates. */
  deletions: ReadonlyArray<{ taskId: string; taskType: string }>;
  guard: TaskGuard;
}

export interface ApplyResult {
  applied: string[];
  deleted: string[];
}

/** One completed step, undone in reverse order when a later one fails. */
type Step = { kind: 'moved-aside'; original: string; backup: string } | { kind: 'placed'; path: string };

/** The workspace directory of a Task, refusing one that is a link (it could lead anywhere). */
async function taskDir(workspace: string, taskType: string, taskId: string): Promise<{ target: string; exists: boolean }> {
  const entry = await resolveEntryPath(workspace, `${taskType}/${taskId}`);
  if (!entry) throw new ValueError(`not a Task directory: ${taskType}/${taskId}`);
  const info = await lstat(entry.real).catch(() => null);
  if (info && !info.isDirectory()) throw new ValueError(`${taskType}/${taskId} exists and is not a directory`);
  return { target: entry.real, exists: info !== null };
}

async function undo(steps: Step[]): Promise<void> {
  for (const step of steps.reverse()) {
    if (step.kind === 'placed') await rm(step.path, { recursive: true, force: true });
    else await rename(step.backup, step.original);
  }
}

/**
 * Replaces and deletes Task directories as one change: everything is checked first (terminal
 * staged records, no active Task touched), then existing directories are moved aside into
 * `scratch` and the new ones renamed in. Any failure moves everything back, so the workspace is
 * either fully updated or as it was.
 */
export async function applySnapshot(req: ApplyRequest): Promise<ApplyResult> {
  const incoming = [...(req.snapshot?.tasks ?? new Map<string, { taskType: string; dir: string }>())];
  for (const [taskId, { taskType, dir }] of incoming) {
    const problem = await req.guard.problemOf(dir, taskId, taskType);
    if (problem) throw new ValueError(`archive Task ${taskId}: ${problem}`);
  }
  const plan: Array<{ taskId: string; taskType: string; staged: string | null; target: string; exists: boolean }> = [];
  for (const [taskId, { taskType, dir }] of incoming) plan.push({ taskId, taskType, staged: dir, ...(await taskDir(req.workspace, taskType, taskId)) });
  for (const { taskId, taskType } of req.deletions) plan.push({ taskId, taskType, staged: null, ...(await taskDir(req.workspace, taskType, taskId)) });
  for (const { taskId, exists } of plan) {
    if (exists && (await req.guard.isActive(taskId))) throw new FileExistsError(`Task ${taskId} is active; it is never replaced or deleted by sync_tasks`);
  }

  const steps: Step[] = [];
  const backups = join(req.scratch, 'backup');
  try {
    for (const [i, item] of plan.entries()) {
      if (item.exists) {
        const backup = join(backups, String(i));
        await mkdir(backups, { recursive: true, mode: 0o700 });
        await rename(item.target, backup);
        steps.push({ kind: 'moved-aside', original: item.target, backup });
      }
      if (item.staged) {
        await mkdir(join(item.target, '..'), { recursive: true });
        await rename(item.staged, item.target);
        steps.push({ kind: 'placed', path: item.target });
      }
    }
  } catch (err) {
    await undo(steps);
    throw err;
  }
  await rm(backups, { recursive: true, force: true });
  const applied = plan.filter((p) => p.staged).map((p) => p.taskId);
  const deleted = plan.filter((p) => !p.staged && p.exists).map((p) => p.taskId);
  await req.guard.refresh([...applied, ...deleted]);
  return { applied, deleted };
}
