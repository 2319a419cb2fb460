import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskStatus, TaskStepStatus } from '../schemas/tasks.js';
import { nowIso, TASK_FILES, writeAllSync, writeJsonAtomicSync } from '../core/task-record/record-files.js';

/** How often percentage changes alone are written (progress lines and status). */
const PROGRESS_COALESCE_MS = 100;
/**
 * How often a running status is republished for step changes. Each publication rewrites the
 * whole status (all steps so far), so publishing at every step boundary made a Task with
 * thousands of steps quadratic; its progress lines still land at once, in `events.jsonl`.
 */
const STATUS_COALESCE_MS = 50;

/**
 * The child's side of the record: it owns `status.json` and `events.jsonl` while it lives.
 * Every change is appended to `events.jsonl` first, then published in `status.json` (spec: Task
 * files). Step boundaries are appended at once; percentages are coalesced; the status is
 * republished at most every 50 ms while running, and the final state is written at once, durably.
 */
export class StatusPublisher {
  readonly #dir: string;
  readonly #eventsFd: number;
  #status: TaskStatus;
  #dirtySteps = new Set<TaskStepStatus>();
  #progressTimer: NodeJS.Timeout | undefined;
  #statusTimer: NodeJS.Timeout | undefined;

  constructor(dir: string, status: TaskStatus) {
    this.#dir = dir;
    this.#status = status;
    // Submit created the file; 'a' also recreates one a Task removed.
    this.#eventsFd = openSync(join(dir, TASK_FILES.events), 'a');
  }

  get status(): Readonly<TaskStatus> {
    return this.#status;
  }

  markRunning(pid: number): void {
    this.#status = { ...this.#status, state: 'running', pid, started_at: nowIso() };
    this.#publish(false);
  }

  beginStep(name: string): TaskStepStatus {
    const step: TaskStepStatus = { name, started_at: nowIso(), finished_at: null, percentage: null };
    this.#status.steps.push(step);
    this.#dirtySteps.add(step);
    this.#writeProgress();
    return step;
  }

  endStep(step: TaskStepStatus): void {
    step.finished_at = nowIso();
    this.#dirtySteps.add(step);
    this.#writeProgress();
  }

  setPercentage(step: TaskStepStatus, percentage: number): void {
    step.percentage = percentage;
    this.#dirtySteps.add(step);
    this.#progressTimer ??= setTimeout(() => this.#writeProgress(), PROGRESS_COALESCE_MS);
  }

  /** Publishes the terminal state, durably; pending progress lands first. */
  finish(patch: Pick<TaskStatus, 'state' | 'result' | 'error' | 'exit_code'>): void {
    this.#appendPending();
    this.#status = { ...this.#status, ...patch, finished_at: nowIso() };
    this.#publish(true);
    closeSync(this.#eventsFd);
  }

  /** Progress lines now, the status that includes them soon. */
  #writeProgress(): void {
    this.#appendPending();
    this.#statusTimer ??= setTimeout(() => this.#publish(false), STATUS_COALESCE_MS);
  }

  #appendPending(): void {
    clearTimeout(this.#progressTimer);
    this.#progressTimer = undefined;
    if (this.#dirtySteps.size === 0) return;
    const lines = [...this.#dirtySteps].map((s) => `${JSON.stringify({ kind: 'progress', ...s })}\n`).join('');
    this.#dirtySteps.clear();
    writeAllSync(this.#eventsFd, lines);
  }

  #publish(durable: boolean): void {
    clearTimeout(this.#statusTimer);
    this.#statusTimer = undefined;
    writeJsonAtomicSync(join(this.#dir, TASK_FILES.status), this.#status, { durable });
  }
}
