import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskStatus, TaskStepStatus } from '../../schemas/tasks.js';
import { nowIso, TASK_FILES, writeJsonAtomicSync } from './record-files.js';

/** How often a chatty Task may rewrite its status for progress alone. */
const PROGRESS_COALESCE_MS = 100;

/**
 * The child's side of the record: it owns `status.json` and `events.jsonl` while it lives.
 * Every change is appended to `events.jsonl` first, then published in `status.json` (spec: Task
 * files). Percentage updates are coalesced; step boundaries and the final state are written at once.
 */
export class StatusPublisher {
  readonly #dir: string;
  #status: TaskStatus;
  #dirtySteps = new Set<TaskStepStatus>();
  #timer: NodeJS.Timeout | undefined;

  constructor(dir: string, status: TaskStatus) {
    this.#dir = dir;
    this.#status = status;
  }

  get status(): Readonly<TaskStatus> {
    return this.#status;
  }

  markRunning(pid: number): void {
    this.#status = { ...this.#status, state: 'running', pid, started_at: nowIso() };
    this.#publish();
  }

  beginStep(name: string): TaskStepStatus {
    const step: TaskStepStatus = { name, started_at: nowIso(), finished_at: null, percentage: null };
    this.#status.steps.push(step);
    this.#dirtySteps.add(step);
    this.flush();
    return step;
  }

  endStep(step: TaskStepStatus): void {
    step.finished_at = nowIso();
    this.#dirtySteps.add(step);
    this.flush();
  }

  setPercentage(step: TaskStepStatus, percentage: number): void {
    step.percentage = percentage;
    this.#dirtySteps.add(step);
    this.#timer ??= setTimeout(() => this.flush(), PROGRESS_COALESCE_MS);
  }

  /** Writes pending step changes: progress lines first, then the status that includes them. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#dirtySteps.size === 0) return;
    const lines = [...this.#dirtySteps].map((s) => JSON.stringify({ kind: 'progress', ...s })).join('\n');
    this.#dirtySteps.clear();
    appendFileSync(join(this.#dir, TASK_FILES.events), `${lines}\n`);
    this.#publish();
  }

  /** Publishes the terminal state; pending progress lands first. */
  finish(patch: Pick<TaskStatus, 'state' | 'result' | 'error' | 'exit_code'>): void {
    this.flush();
    this.#status = { ...this.#status, ...patch, finished_at: nowIso() };
    this.#publish();
  }

  #publish(): void {
    writeJsonAtomicSync(join(this.#dir, TASK_FILES.status), this.#status);
  }
}
