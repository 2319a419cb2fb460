import { stringify } from '../vendor/yaml.js';
import { isObject } from '../core/is-object.js';
import type { TaskStatus } from '../schemas/tasks.js';
import type { JobResponse } from '../schemas/job-response.js';
import type { ProgressEvent, StreamEvent } from '../schemas/events.js';
import { bytes, cellText, columnsOf, percent, roundPercentages, table, type Column } from './text-table.js';
import { previewText } from './text-preview.js';

type Row = Record<string, unknown>;

/** A duration between two ISO times, e.g. `1.2 s`; empty when either is missing. */
function seconds(from: unknown, to: unknown): string {
  if (typeof from !== 'string' || typeof to !== 'string') return '';
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '';
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/** A step as a person reads it: `train 33.3%`, `train done`. */
export function progressText(step: Pick<ProgressEvent, 'name' | 'percentage' | 'finished_at'>): string {
  return `${step.name}${step.percentage != null ? ` ${percent(step.percentage)}` : ''}${step.finished_at ? ' done' : ''}`;
}

/** One line for a Task status: what a person checks first. */
export function statusLine(status: Pick<TaskStatus, 'task_id' | 'state'> & Partial<TaskStatus>): string {
  const ended = ENDED.has(status.state);
  const time = ended ? seconds(status.started_at, status.finished_at) : '';
  const parts = [`${status.task_id}  ${status.state}${time ? ` in ${time}` : ''}`];
  if (ended && status.state !== 'succeeded') parts.push(`exit code ${status.exit_code ?? '?'}`);
  if (status.error) parts.push(status.error);
  const step = status.steps?.at(-1);
  if (!ended && step) parts.push(`step ${progressText({ ...step, finished_at: null })}`);
  return parts.join('  ·  ');
}

/** A Task status in full: the summary line, then result and artifacts when there are any. */
function statusText(status: TaskStatus): string {
  const lines = [statusLine(status)];
  const { artifacts, ...result } = status.result as Row;
  if (Object.keys(result).length) lines.push(`result: ${JSON.stringify(result)}`);
  if (isObject(artifacts)) for (const [name, a] of Object.entries(artifacts)) lines.push(`artifact ${name}: ${isObject(a) ? `${String(a['path'])} (${bytes(a['size'])})` : ''}`);
  return lines.join('\n');
}

const STATUS_COLUMNS: ReadonlyArray<Column<Partial<TaskStatus>>> = [
  { heading: 'TASK ID', cell: (s) => s.task_id },
  { heading: 'STATE', cell: (s) => s.state },
  { heading: 'STEP', cell: (s) => (s.steps?.length ? progressText(s.steps.at(-1)!) : '') },
  { heading: 'TIME', cell: (s) => seconds(s.started_at, s.finished_at), right: true },
  { heading: 'EXIT', cell: (s) => (s.state && ENDED.has(s.state) ? s.exit_code : ''), right: true },
  { heading: 'ERROR', cell: (s) => s.error },
];

const looksLikeStatus = (value: unknown): value is TaskStatus => isObject(value) && typeof value['task_id'] === 'string' && typeof value['state'] === 'string';

/** list_entries, list_task_runs: the directory, then one row per entry. */
function listingText(listing: Row): string {
  const entries = (listing['entries'] as unknown[]).filter(isObject);
  const columns: Array<Column<Row>> = [
    { heading: 'NAME', cell: (e) => `${String(e['name'])}${e['kind'] === 'directory' ? '/' : ''}` },
    { heading: 'KIND', cell: (e) => (e['kind'] === 'file' ? e['preview_kind'] : e['kind']) },
    { heading: 'SIZE', cell: (e) => (e['kind'] === 'directory' ? '' : bytes(e['size'])), right: true },
    { heading: 'MODIFIED', cell: (e) => (typeof e['modified_at'] === 'string' ? e['modified_at'].replace('T', ' ').replace(/\.\d+/, '') : '') },
  ];
  const where = `${String(listing['path']) || '.'}/  (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}${listing['truncated'] ? ', truncated' : ''})`;
  return `${where}\n${table(entries, columns)}`;
}

/** `shell`: its stdout as printed, its stderr under a rule, then how it ended. */
function shellText(output: Row, streamed: boolean): string {
  const parts: string[] = [];
  if (!streamed) {
    if (output['stdout']) parts.push(String(output['stdout']).replace(/\n$/, ''));
    if (output['stderr']) parts.push(`--- stderr ---\n${String(output['stderr']).replace(/\n$/, '')}`);
  }
  const truncated = [output['stdout_truncated'] && 'stdout', output['stderr_truncated'] && 'stderr'].filter(Boolean);
  parts.push(`[${output['exit_code'] === null ? 'timed out' : `exit code ${String(output['exit_code'])}`}${truncated.length ? `; ${truncated.join(' and ')} truncated to 1 MiB` : ''}]`);
  return parts.join('\n');
}

const looksLikeShell = (v: Row): boolean => typeof v['stdout'] === 'string' && typeof v['stderr'] === 'string' && 'exit_code' in v;

/** Arrays: statuses and definitions in their own tables, strings one a line, other objects in a table of their fields. */
function listText(items: readonly unknown[]): string {
  if (items.length === 0) return '(none)';
  if (items.every((item) => typeof item === 'string')) return items.join('\n');
  if (items.every(looksLikeStatus)) return table(items, STATUS_COLUMNS);
  if (items.every((i) => isObject(i) && typeof i['name'] === 'string' && 'input_schema' in i)) {
    const definitions = items as Row[];
    return table(definitions, [
      { heading: 'NAME', cell: (d) => d['name'] },
      { heading: 'TYPE', cell: (d) => d['task_type'] },
      { heading: 'SOURCE', cell: (d) => (d['plugin'] ? `plugin ${String(d['plugin'])}` : d['source']) },
      { heading: 'DESCRIPTION', cell: (d) => String(d['description'] ?? '').split('\n')[0] },
    ]);
  }
  return table(items, columnsOf(items));
}

/** A short human form of an answer: tables for listings, statuses and previews; the rest as YAML. */
function answerText(answer: unknown, streamed: boolean): string {
  if (typeof answer === 'string') return answer;
  if (Array.isArray(answer)) return listText(answer);
  if (!isObject(answer)) return cellText(answer);
  if (looksLikeStatus(answer) && 'run_id' in answer && 'steps' in answer) return statusText(answer);
  if (typeof answer['task_id'] === 'string' && typeof answer['run_id'] === 'string') {
    return `submitted ${answer['task_id']}  (run ${answer['run_id']})\nfollow it with: taskyard logs '${answer['task_id']}' --follow`;
  }
  if (looksLikeShell(answer)) return shellText(answer, streamed);
  if (typeof answer['path'] === 'string' && Array.isArray(answer['entries'])) return listingText(answer);
  if (Array.isArray(answer['items']) && answer['items'].every(looksLikeStatus)) {
    const shown = `${answer['items'].length}${typeof answer['total'] === 'number' ? ` of ${answer['total']}` : ''} Tasks`;
    const next = typeof answer['next_cursor'] === 'string' ? `; next page: --cursor '${answer['next_cursor']}'` : '';
    return `${table(answer['items'], STATUS_COLUMNS)}\n(${shown}${next})`;
  }
  const preview = previewText(answer);
  if (preview !== undefined) return preview;
  return stringify(roundPercentages(answer)).trimEnd();
}

/** `--output text`: the answer for people; a failure is said as such (`streamed`: its output was already printed as log events). */
export function responseText(response: JobResponse, streamed = false): string {
  const text = answerText(response.answer, streamed);
  // A shell command's last line already says how it ended (its exit code, or a timeout).
  return response.success || (isObject(response.answer) && looksLikeShell(response.answer)) ? text : `failed: ${text}`;
}

/** Prints a JobResponse: pretty JSON by default (for scripts), the text summary with `--output text`. */
export function printResponse(response: JobResponse, output: string | undefined): void {
  console.log(output === 'text' ? responseText(response) : JSON.stringify(response, null, 2));
}

/**
 * `--stream --output text`: each event as a person reads it while it arrives: log text as
 * written (a stderr channel to stderr), progress and artifacts as one line on stderr, the result
 * as `--output text` prints an answer (without repeating the output the log events printed).
 */
export class TextEvents {
  #logged = false;

  print(event: StreamEvent): void {
    if (event.kind === 'log') {
      (event.channel === 'stderr' ? process.stderr : process.stdout).write(event.content);
      this.#logged ||= event.content.length > 0;
    } else if (event.kind === 'progress') console.error(`[progress] ${progressText(event)}`);
    else if (event.kind === 'artifact') console.error(`[artifact] ${event.path} (${bytes(event.size)})`);
    else if (event.kind === 'result') console.log(responseText(event, this.#logged));
    else console.log(JSON.stringify(event));
  }
}
