import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FileExistsError, PermissionError, ValueError } from '../../core/errors.js';
import type { UnpackedSnapshot } from './unpack-snapshot.js';
import type { SyncResult } from '../../schemas/plugins.js';

/** What applying a snapshot needs to know about live Tasks, answered by the task system. */
export interface TaskGuard {
  /**
   * Reserves these Task IDs against submits and deletes until the returned release is called;
   * throws a FileExistsError when one is already reserved by someone else.
   */
  hold(taskIds: readonly string[]): () => void;
  /** True while the Task is queued or running (a managed runner, or a record that says so). */
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


/** One completed step, undone in reverse order when a later one fails. */
type Step = { kind: 'moved-aside'; original: string; backup: string } | { kind: 'placed'; path: string };

/** Absent, or a plain directory: a link could lead anywhere, so it is never written through. */
async function plainDirOrAbsent(path: string, shown: string): Promise<boolean> {
  const info = await lstat(path).catch(() => null);
  if (info && !info.isDirectory()) throw new PermissionError(`${shown} in the workspace is not a plain directory`);
  return info !== null;
}

/** The workspace directory of a Task (`<workspace>/<type>/<task_id>`, both parts validated IDs). */
async function taskDir(workspace: string, taskType: string, taskId: string): Promise<{ target: string; exists: boolean }> {
  await plainDirOrAbsent(join(workspace, taskType), taskType);
  const target = join(workspace, taskType, taskId);
  return { target, exists: await plainDirOrAbsent(target, `${taskType}/${taskId}`) };
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
export async function applySnapshot(req: ApplyRequest): Promise<SyncResult> {
  const incoming = [...(req.snapshot?.tasks ?? new Map<string, { taskType: string; dir: string }>())];
  for (const [taskId, { taskType, dir }] of incoming) {
    const problem = await req.guard.problemOf(dir, taskId, taskType);
    if (problem) throw new ValueError(`archive Task ${taskId}: ${problem}`);
  }
  const release = req.guard.hold([...incoming.map(([id]) => id), ...req.deletions.map((d) => d.taskId)]);
  let result: SyncResult;
  try {
    const plan: PlanItem[] = [];
    for (const [taskId, { taskType, dir }] of incoming) plan.push({ taskId, taskType, staged: dir, ...(await taskDir(req.workspace, taskType, taskId)) });
    for (const { taskId, taskType } of req.deletions) plan.push({ taskId, taskType, staged: null, ...(await taskDir(req.workspace, taskType, taskId)) });
    for (const { taskId, exists } of plan) {
      if (exists && (await req.guard.isActive(taskId))) throw new FileExistsError(`Task ${taskId} is active; sync_tasks never replaces or deletes an active Task`);
    }
    await replace(plan, join(req.scratch, 'backup'));
    result = { applied: plan.filter((p) => p.staged).map((p) => p.taskId), deleted: plan.filter((p) => !p.staged && p.exists).map((p) => p.taskId) };
  } finally {
    release();
  }
  // After the release: the task index does not trust disk reads of claimed Tasks.
  await req.guard.refresh([...result.applied, ...result.deleted]);
  return result;
}

interface PlanItem {
  taskId: string;
  taskType: string;
  /** The unpacked directory to move in, or null for a deletion. */
  staged: string | null;
  target: string;
  exists: boolean;
}

/** Moves existing directories aside and the staged ones in; all or nothing. */
async function replace(plan: readonly PlanItem[], backups: string): Promise<void> {
  const steps: Step[] = [];
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
}
