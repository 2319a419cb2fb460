import { closeSync } from 'node:fs';
import { join } from 'node:path';
import { nowIso, TASK_REPORT_FILES, writeAllSync } from '../core/task-record/record-files.js';
import { MAX_METRIC_NAME, MAX_METRIC_POINTS, MAX_METRIC_SERIES } from '../core/task-record/metric-limits.js';
import { openAppendFileSync } from '../workers/safe-file.js';

/** How long points wait to be appended together (a training loop may report thousands a second). */
const APPEND_COALESCE_MS = 100;
/** Points appended at once, at most, before the timer fires. */
const MAX_BUFFERED = 512;

/**
 * The runner's side of `metrics.jsonl`: one JSON line per point (`name`, `value`, optional `step`,
 * `timestamp`), appended in batches. The file stays within the limits of metric-limits.ts (points
 * and series per Task, name length); what goes past them is dropped and said once in the log.
 */
export class MetricPoints {
  readonly #file: string;
  readonly #warn: (message: string) => void;
  #fd: number | undefined;
  #buffered: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #points = 0;
  readonly #series = new Set<string>();
  #warned = false;
  /** The file could not be opened or written: later points are dropped too. */
  #failed = false;

  constructor(dir: string, warn: (message: string) => void) {
    this.#file = join(dir, TASK_REPORT_FILES.metrics);
    this.#warn = warn;
  }

  add(name: string, value: number | null, step: number | undefined): void {
    if (this.#failed) return;
    if (name.length > MAX_METRIC_NAME) return this.#drop(`metric names are at most ${MAX_METRIC_NAME} characters`);
    if (!this.#series.has(name) && this.#series.size >= MAX_METRIC_SERIES) return this.#drop(`a Task keeps at most ${MAX_METRIC_SERIES} metrics`);
    if (this.#points >= MAX_METRIC_POINTS) return this.#drop(`a Task keeps at most ${MAX_METRIC_POINTS} metric points`);
    this.#series.add(name);
    this.#points++;
    this.#buffered.push(`${JSON.stringify(step === undefined ? { name, value, timestamp: nowIso() } : { name, value, step, timestamp: nowIso() })}\n`);
    if (this.#buffered.length >= MAX_BUFFERED) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), APPEND_COALESCE_MS).unref();
  }

  /** Appends what is buffered. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#buffered.length === 0) return;
    const lines = this.#buffered.join('');
    this.#buffered = [];
    try {
      // Opened on the first point (most Tasks report none, and then have no file), as task.log
      // is: a link or FIFO planted there is refused, never followed out of the Task directory.
      this.#fd ??= openAppendFileSync(this.#file);
      writeAllSync(this.#fd, lines);
    } catch (err) {
      // Lost metrics never fail the run (this may run in a timer, where a throw ends the runner).
      this.#failed = true;
      this.#drop(err instanceof Error ? err.message : String(err));
    }
  }

  close(): void {
    this.flush();
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #drop(why: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#warn(`metric points dropped from here on: ${why}`);
  }
}
