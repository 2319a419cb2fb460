import type { ArtifactRecord, TaskStepStatus } from '../schemas/tasks.js';
import { nowIso, writeAllSync } from '../core/task-record/record-files.js';
import type { StatusPublisher } from './status-publisher.js';
import { MetricPoints } from './metric-points.js';
import { cutStepName } from '../core/task-record/step-limits.js';
import { artifactRecordOf } from './artifact-record.js';
import { TaskError } from './task-sdk.js';
import type { LogLevel, TaskReport } from './task-protocol.js';

/** Where a run's reports land: its directory, its name (the implicit step's), and task.log. */
export interface ReportPlace {
  readonly dir: string;
  readonly registration: string;
  /** task.log, opened for appending (shared with the Task's stdout). */
  readonly logFd: number;
}

/** The error a Task reported, as the status will carry it. */
export interface ReportedError {
  readonly type: string;
  readonly message: string;
}

const LEVEL_WORDS: Record<LogLevel, string> = { debug: 'DEBUG', info: 'INFO', warning: 'WARNING', error: 'ERROR' };

/**
 * The one receiver of a run's reports (the Task protocol, runner/task-protocol.ts): steps and
 * percentages go to the status publisher, metric points to metrics.jsonl, artifacts are hashed
 * and kept for the output, log lines go to task.log, output fields and the error are kept for the
 * end. The TypeScript TaskContext calls these methods in process; a command Task's report lines
 * reach them through `apply`. A report that cannot be applied throws a TaskError saying why.
 */
export class RunReports {
  readonly artifacts = new Map<string, ArtifactRecord>();
  readonly #place: ReportPlace;
  readonly #publisher: StatusPublisher;
  readonly #metrics: MetricPoints;
  /** Steps begun and not ended, oldest first: progress goes to the last. */
  readonly #open: TaskStepStatus[] = [];
  /** The step progress outside any step goes to (named after the Task), made on first need. */
  #implicit: TaskStepStatus | undefined;
  #output: Record<string, unknown> = {};
  #error: ReportedError | undefined;

  constructor(place: ReportPlace, publisher: StatusPublisher) {
    this.#place = place;
    this.#publisher = publisher;
    this.#metrics = new MetricPoints(place.dir, (message) => this.log('warning', message));
  }

  /** Output fields reported so far. */
  get output(): Readonly<Record<string, unknown>> {
    return this.#output;
  }

  /** The error the Task reported, if it did. */
  get error(): ReportedError | undefined {
    return this.#error;
  }

  /** One report of the protocol; only `artifact` needs awaiting (it hashes the file). */
  apply(report: TaskReport): Promise<void> | void {
    switch (report.type) {
      case 'step_start':
        return void this.beginStep(report.name);
      case 'step_end':
        return this.endStepNamed(report.name);
      case 'progress':
        return this.progress(report.percentage);
      case 'metric':
        return this.metric(report.name, report.value, report.step);
      case 'artifact':
        return this.artifact(report.name, report.path).then(() => undefined);
      case 'log':
        return this.log(report.level ?? 'info', report.message);
      case 'output':
        return this.addOutput(report.values);
      case 'error':
        this.#error = { type: report.error_type, message: report.message };
        return;
    }
  }

  beginStep(name: string): TaskStepStatus {
    if (typeof name !== 'string' || !name) throw new TaskError('ValueError', 'step name must be a non-empty string');
    const step = this.#publisher.beginStep(name);
    this.#open.push(step);
    return step;
  }

  endStep(step: TaskStepStatus): void {
    const at = this.#open.lastIndexOf(step);
    if (at !== -1) this.#open.splice(at, 1);
    this.#publisher.endStep(step);
  }

  /** Ends the innermost open step named `name` (the innermost open step, without a name). */
  endStepNamed(name: string | undefined): void {
    const step = name === undefined ? this.#open.at(-1) : this.#open.findLast((s) => s.name === cutStepName(name));
    if (!step) throw new TaskError('ValueError', name === undefined ? 'no step is open' : `no open step is named ${JSON.stringify(name)}`);
    this.endStep(step);
  }

  /** Ends every step still open, the implicit one included (the Task ended inside them). */
  endOpenSteps(): void {
    while (this.#open.length) this.endStep(this.#open.at(-1)!);
    if (this.#implicit?.finished_at === null) this.#publisher.endStep(this.#implicit);
  }

  progress(percentage: number): void {
    if (typeof percentage !== 'number' || !(percentage >= 0 && percentage <= 100)) {
      throw new TaskError('ValueError', `progress percentage must be a number from 0 to 100, got ${String(percentage)}`);
    }
    const step = this.#open.at(-1) ?? (this.#implicit ??= this.#publisher.beginStep(this.#place.registration));
    this.#publisher.setPercentage(step, percentage);
  }

  metric(name: string, value: number | null, step?: number): void {
    if (typeof name !== 'string' || !name) throw new TaskError('ValueError', 'metric name must be a non-empty string');
    if (value !== null && typeof value !== 'number') throw new TaskError('ValueError', `metric ${name}: value must be a number, got ${String(value)}`);
    // NaN and infinities are real outcomes of training; JSON carries them as null.
    if (value !== null && !Number.isFinite(value)) value = null;
    if (step !== undefined && !Number.isSafeInteger(step)) throw new TaskError('ValueError', `metric ${name}: step must be a whole number, got ${String(step)}`);
    this.#metrics.add(name, value, step);
  }

  async artifact(name: string, relativePath: string): Promise<ArtifactRecord> {
    if (typeof name !== 'string' || !name) throw new TaskError('ValueError', 'artifact name must be a non-empty string');
    const record = await artifactRecordOf(this.#place.dir, relativePath);
    this.artifacts.set(name, record);
    return record;
  }

  log(level: LogLevel, message: string): void {
    writeAllSync(this.#place.logFd, `${nowIso()} ${LEVEL_WORDS[level]} ${message}\n`);
  }

  addOutput(values: Record<string, unknown>): void {
    this.#output = { ...this.#output, ...values };
  }

  /** Appends what is still buffered (metric points); progress lands with the publisher's finish. */
  close(): void {
    this.#metrics.close();
  }
}
