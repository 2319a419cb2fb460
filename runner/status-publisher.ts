import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskStatus, TaskStepStatus } from '../schemas/tasks.js';
import { nowIso, TASK_FILES, writeAllSync, writeJsonAtomicSync } from '../core/task-record/record-files.js';
import { cutStepName, MAX_STEPS, stepToDrop } from '../core/task-record/step-limits.js';

/** How often percentage changes alone are written (progress lines and status). */
const PROGRESS_COALESCE_MS = 100;
/**
 * How often a running status is republished for step changes. Each publication rewrites the
 * whole status (all steps so far), so publishing at every step boundary made a Task with
 * thousands of steps quadratic; its progress lines still land at once, in `events.jsonl`.
 */
const STATUS_COALESCE_MS = 50;
/**
 * Step boundaries are appended at once, unless progress lines were appended less than this long
 * ago: then they wait until it has passed, and go together.
 */
const LINES_COALESCE_MS = 20;
/**
 * Most progress lines one append carries: the latest changed steps. A Task running thousands of
 * steps a second (100,000 with 1,000-character names made a 225 MB events.jsonl) adds at most
 * this many lines per LINES_COALESCE_MS; the status still has every step the limits keep.
 */
const MAX_LINES_PER_APPEND = 10;

/**
 * The child's side of the record: it owns `status.json` and `events.jsonl` while it lives.
 * Every change is appended to `events.jsonl` first, then published in `status.json` (spec: Task
 * files). Step boundaries are appended at once (at most every 20 ms, at most 10 lines an append);
 * percentages are coalesced; the status is republished at most every 50 ms while running, and the
 * final state is written at once, durably. The status keeps steps within the limits of
 * step-limits.ts: names cut to 200 characters, at most 1,000 steps (the first 100 and the latest).
 */
export class StatusPublisher {
  readonly #dir: string;
  readonly #eventsFd: number;
  #status: TaskStatus;
  #dirtySteps = new Set<TaskStepStatus>();
  #progressTimer: NodeJS.Timeout | undefined;
  #boundaryTimer: NodeJS.Timeout | undefined;
  /** When progress lines were last appended (Date.now()). */
  #appendedAt = 0;
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
    const step: TaskStepStatus = { name: cutStepName(name), started_at: nowIso(), finished_at: null, percentage: null };
    const steps = this.#status.steps;
    steps.push(step);
    // One at a time, so this costs at most a scan of MAX_STEPS per step.
    if (steps.length > MAX_STEPS) steps.splice(stepToDrop(steps), 1);
    this.#stepChanged(step);
    return step;
  }

  endStep(step: TaskStepStatus): void {
    step.finished_at = nowIso();
    this.#stepChanged(step);
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

  /** A step began or ended: its line now, or once LINES_COALESCE_MS since the last append has passed. */
  #stepChanged(step: TaskStepStatus): void {
    this.#dirtySteps.add(step);
    const wait = this.#appendedAt + LINES_COALESCE_MS - Date.now();
    if (wait <= 0) this.#writeProgress();
    else this.#boundaryTimer ??= setTimeout(() => this.#writeProgress(), wait);
  }

  /** Progress lines now, the status that includes them soon. */
  #writeProgress(): void {
    this.#appendPending();
    this.#statusTimer ??= setTimeout(() => this.#publish(false), STATUS_COALESCE_MS);
  }

  #appendPending(): void {
    clearTimeout(this.#progressTimer);
    clearTimeout(this.#boundaryTimer);
    this.#progressTimer = this.#boundaryTimer = undefined;
    if (this.#dirtySteps.size === 0) return;
    const lines = [...this.#dirtySteps].slice(-MAX_LINES_PER_APPEND).map((s) => `${JSON.stringify({ kind: 'progress', ...s })}\n`).join('');
    this.#dirtySteps.clear();
    writeAllSync(this.#eventsFd, lines);
    this.#appendedAt = Date.now();
  }

  #publish(durable: boolean): void {
    clearTimeout(this.#statusTimer);
    this.#statusTimer = undefined;
    writeJsonAtomicSync(join(this.#dir, TASK_FILES.status), this.#status, { durable });
  }
}
