import { createRequire } from 'node:module';
import { isObject } from '../core/is-object.js';
import type { TaskStatus } from '../schemas/tasks.js';
import type { JobResponse } from '../schemas/job-response.js';

type Row = Record<string, unknown>;

/**
 * YAML is loaded on first use: only `--output text` of an answer with no shorter form needs it,
 * and importing it would cost every CLI start about a tenth of a second of CPU.
 */
const stringify = (value: unknown): string => (createRequire(import.meta.url)('yaml') as typeof import('yaml')).stringify(value);

/** A duration between two ISO times, e.g. `1.2 s`; empty when either is missing. */
function duration(from: unknown, to: unknown): string {
  if (typeof from !== 'string' || typeof to !== 'string') return '';
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? ` in ${(ms / 1000).toFixed(1)} s` : '';
}

/** One line for a Task status: what a person checks first. */
export function statusLine(status: Pick<TaskStatus, 'task_id' | 'state'> & Partial<TaskStatus>): string {
  const ended = status.state === 'succeeded' || status.state === 'failed' || status.state === 'cancelled';
  const parts = [`${status.task_id}  ${status.state}${ended ? duration(status.started_at, status.finished_at) : ''}`];
  if (ended && status.state !== 'succeeded') parts.push(`exit code ${status.exit_code ?? '?'}`);
  if (status.error) parts.push(status.error);
  const step = status.steps?.at(-1);
  if (!ended && step) parts.push(`step ${step.name}${step.percentage != null ? ` ${step.percentage}%` : ''}`);
  return parts.join('  ·  ');
}

/** A Task status in full: the summary line, then result and artifacts when there are any. */
function statusText(status: TaskStatus): string {
  const lines = [statusLine(status)];
  const { artifacts, ...result } = status.result as Row;
  if (Object.keys(result).length) lines.push(`result: ${JSON.stringify(result)}`);
  if (isObject(artifacts)) for (const [name, a] of Object.entries(artifacts)) lines.push(`artifact ${name}: ${isObject(a) ? `${String(a['path'])} (${String(a['size'])} bytes)` : ''}`);
  return lines.join('\n');
}

function looksLikeStatus(value: unknown): value is TaskStatus {
  return isObject(value) && typeof value['task_id'] === 'string' && typeof value['state'] === 'string' && 'run_id' in value;
}

/** A short human form of an answer: Task shapes as summaries, lists one item a line, the rest as YAML. */
function answerText(answer: unknown): string {
  if (typeof answer === 'string') return answer;
  if (looksLikeStatus(answer)) return statusText(answer);
  if (isObject(answer) && typeof answer['task_id'] === 'string' && typeof answer['run_id'] === 'string') {
    return `submitted ${answer['task_id']}  (run ${answer['run_id']})\nfollow it with: taskyard logs '${answer['task_id']}' --follow`;
  }
  if (Array.isArray(answer)) {
    if (answer.length === 0) return '(none)';
    if (answer.every((item) => typeof item === 'string')) return answer.join('\n');
    if (answer.every(looksLikeStatus)) return answer.map((s) => statusLine(s)).join('\n');
  }
  return stringify(answer).trimEnd();
}

/** `--output text`: the answer for people; a failure is said as such. */
export function responseText(response: JobResponse): string {
  const text = answerText(response.answer);
  return response.success ? text : `failed: ${text}`;
}

/** Prints a JobResponse: pretty JSON by default (for scripts), the text summary with `--output text`. */
export function printResponse(response: JobResponse, output: string | undefined): void {
  console.log(output === 'text' ? responseText(response) : JSON.stringify(response, null, 2));
}
