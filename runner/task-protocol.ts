/**
 * The Task protocol, version 1: how a Task reports to its runner, in any language. A command Task
 * writes one JSON object per line on the channel its runner hands it (the descriptor named by
 * TASKYARD_PROTOCOL_FD); the TypeScript SDK's TaskContext sends the same reports in process. The
 * runner checks every report against this map; one that does not fit is logged and dropped, never
 * fatal. docs/task-protocol.md is the reference; the Python helper (python/taskyard_task.py) is
 * the other client. The runner bundle imports this: node built-ins and message-check only.
 */
import { MessageKinds, nonEmptyText, text, type Field } from './message-check.js';

/** The version a runner speaks, told to the Task in TASKYARD_PROTOCOL_VERSION. */
export const TASK_PROTOCOL_VERSION = 1;

/** The variables a runner sets for a command Task (and every process it starts). */
export const PROTOCOL_ENV = Object.freeze({
  /** The descriptor to write report lines to. */
  fd: 'TASKYARD_PROTOCOL_FD',
  version: 'TASKYARD_PROTOCOL_VERSION',
  /** A JSON file with the Task's validated inputs (defaults filled, base fields included). */
  inputs: 'TASKYARD_INPUTS',
});

/** The descriptor a command Task's channel sits at (its stdio are 0-2). */
export const PROTOCOL_FD = 3;

/** Longest report line read; a longer one is dropped whole (a runner never holds more). */
export const MAX_REPORT_LINE = 1024 * 1024;

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

/** One report: a step begins or ends, a percentage, a metric point, an artifact, a log line, output fields, the error. */
export type TaskReport =
  | { type: 'step_start'; name: string }
  /** Ends the innermost open step of that name (the innermost open step, without a name). */
  | { type: 'step_end'; name?: string | undefined }
  /** Percentage (0-100) of the innermost open step (an implicit step named after the Task when none is open). */
  | { type: 'progress'; percentage: number }
  /** `value` null stands for a value JSON cannot carry (NaN, infinity). */
  | { type: 'metric'; name: string; value: number | null; step?: number | undefined }
  /** `path` relative to the Task directory; the runner computes size and sha256. */
  | { type: 'artifact'; name: string; path: string }
  | { type: 'log'; message: string; level?: LogLevel | undefined }
  /** Fields of the output, merged over those reported before (the last value of a field wins). */
  | { type: 'output'; values: Record<string, unknown> }
  /** Why the Task fails: the status's error becomes `<error_type>: <message>`. */
  | { type: 'error'; error_type: string; message: string };

const field = <T>(expects: string, test: (value: unknown) => boolean): Field<T> => ({ expects, test: test as (value: unknown) => value is T });
const optional = <T>(inner: Field<T>): Field<T | undefined> => field(`${inner.expects} or absent`, (v) => v === undefined || inner.test(v));

const percentage = field<number>('a number from 0 to 100', (v) => typeof v === 'number' && v >= 0 && v <= 100);
const metricValue = field<number | null>('a finite number or null', (v) => v === null || (typeof v === 'number' && Number.isFinite(v)));
const wholeNumber = field<number>('a whole number', (v) => Number.isSafeInteger(v));
const level = field<LogLevel>('one of debug, info, warning, error', (v) => v === 'debug' || v === 'info' || v === 'warning' || v === 'error');
const object = field<Record<string, unknown>>('an object', (v) => typeof v === 'object' && v !== null && !Array.isArray(v));
const errorType = field<string>('a name such as ValueError (letters, digits, _ and .)', (v) => typeof v === 'string' && /^[A-Za-z_][\w.]{0,99}$/.test(v));

export const TASK_REPORTS = new MessageKinds<TaskReport>('Task protocol', {
  step_start: { name: nonEmptyText },
  step_end: { name: optional(nonEmptyText) },
  progress: { percentage },
  metric: { name: nonEmptyText, value: metricValue, step: optional(wholeNumber) },
  artifact: { name: nonEmptyText, path: nonEmptyText },
  log: { message: text, level: optional(level) },
  output: { values: object },
  error: { error_type: errorType, message: text },
});

/**
 * Splits a byte stream into report lines, holding at most MAX_REPORT_LINE bytes: a longer line
 * is dropped whole and named by `onRefused`. Each complete line is checked against the map.
 */
export class ReportLines {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #oversized = false;

  constructor(
    private readonly onReport: (report: TaskReport) => void,
    private readonly onRefused: (error: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.#take(chunk.subarray(start, end));
      this.#line();
      start = end + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  }

  /** The channel closed: a last line without its newline still counts. */
  end(): void {
    if (this.#pendingBytes > 0 || this.#oversized) this.#line();
  }

  #take(piece: Buffer): void {
    if (this.#oversized) return;
    if (this.#pendingBytes + piece.length > MAX_REPORT_LINE) {
      this.#oversized = true;
      this.#pending = [];
      this.#pendingBytes = 0;
      return;
    }
    this.#pending.push(Buffer.from(piece));
    this.#pendingBytes += piece.length;
  }

  #line(): void {
    if (this.#oversized) {
      this.#oversized = false;
      this.onRefused(`a Task protocol line longer than ${MAX_REPORT_LINE} bytes was dropped`);
      return;
    }
    const line = Buffer.concat(this.#pending, this.#pendingBytes).toString('utf8');
    this.#pending = [];
    this.#pendingBytes = 0;
    if (line.trim() === '') return;
    const checked = TASK_REPORTS.parse(line);
    if (checked.ok) this.onReport(checked.message);
    else this.onRefused(checked.error);
  }
}
