import type { Api } from '../api/client.js';
import { TERMINAL_STATES, type ArtifactRecord, type TaskContext, type TaskState, type TaskStatus, type TaskStep } from '../api/types.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { downloadButton, imageView, isImage } from '../ui/file-download.js';
import { durationBetween, formatBytes, formatDuration, timeLabel } from '../ui/format.js';
import { jsonView } from '../ui/highlight.js';
import { progressBar } from '../ui/progress-bar.js';

function row(label: string, value: Node | string): HTMLElement[] {
  return [h('dt', {}, label), h('dd', {}, value)];
}

/** Identity, times and outcome of one run. */
export function overviewSection(s: TaskStatus): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    row('run', h('code', {}, s.run_id)),
    row('task', s.task_name),
    row('type', s.task_type),
    row('pid', s.pid === null ? '—' : String(s.pid)),
    row('created', timeLabel(s.created_at)),
    row('started', timeLabel(s.started_at)),
    row('finished', timeLabel(s.finished_at)),
    row('duration', formatDuration(durationBetween(s.started_at, s.finished_at))),
    // The record's exit_code defaults to 0 before the end: only a finished Task has one.
    row('exit code', TERMINAL_STATES.has(s.state) ? String(s.exit_code) : '—'),
    s.error ? row('error', h('span', { class: 'error-text' }, s.error)) : [],
  );
}

/** The engine's own name for the run: its Slurm job id. */
export function slurmJobFacts(jobId: string): HTMLElement {
  return h('dl', { class: 'facts' }, row('Slurm job', h('code', { 'data-slurm-job': jobId }, jobId)));
}

/** What the steps card says when there are none: true for the Task's state. */
const NO_STEPS: Readonly<Record<TaskState, string>> = {
  queued: 'Waiting to start: no steps yet.',
  running: 'No steps started yet.',
  succeeded: 'This Task recorded no steps.',
  failed: 'The Task failed before it started a step.',
  cancelled: 'The Task was cancelled before it started a step.',
};

/** What the result card says when there is no output: true for the Task's state. */
const NO_RESULT: Readonly<Record<TaskState, string>> = {
  queued: 'No result yet: the Task has not started.',
  running: 'No result yet: the Task is running.',
  succeeded: 'The output has no fields besides artifacts.',
  failed: 'No result: the Task failed (see the error in Status).',
  cancelled: 'No result: the Task was cancelled.',
};

/** Every started step with its progress bar (a finished step without percentage counts as done). */
export function stepsSection(steps: readonly TaskStep[], state: TaskState): HTMLElement {
  if (!steps.length) return notice(NO_STEPS[state], 'empty');
  return h(
    'div',
    { class: 'steps' },
    steps.map((step) => {
      const pct = step.percentage ?? (step.finished_at ? 100 : null);
      return h(
        'div',
        { class: 'step', 'data-step': step.name },
        h('span', { class: 'step-name', title: step.name }, step.name),
        progressBar(pct, step.name),
        h('span', { class: 'step-pct' }, pct === null ? 'running' : `${Math.round(pct)} %`),
        h('span', { class: 'step-time muted' }, formatDuration(durationBetween(step.started_at, step.finished_at))),
      );
    }),
  );
}

/**
 * Artifacts with sizes, checksums and a download button; each path opens in the workspace
 * browser, and image artifacts are shown below the table.
 */
export function artifactsSection(s: TaskStatus, api: Api, signal: AbortSignal): HTMLElement {
  const artifacts = Object.entries(s.result.artifacts ?? {}) as Array<[string, ArtifactRecord]>;
  if (!artifacts.length) return notice('No artifacts.', 'empty');
  const dir = `${s.task_type}/${s.task_id}`;
  const box = h('div', { class: 'artifacts' });
  const onError = (text: string) => box.prepend(notice(text, 'error'));
  const images = artifacts.filter(([, a]) => isImage(a.path));
  box.append(
    h(
      'table',
      { class: 'grid' },
      h('thead', {}, h('tr', {}, ['name', 'path', 'size', 'sha256', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        artifacts.map(([name, a]) =>
          h(
            'tr',
            { 'data-artifact': name },
            h('td', {}, h('strong', {}, name)),
            h('td', {}, h('a', { href: href(['workspace'], { path: dir, file: `${dir}/${a.path}` }) }, h('code', {}, a.path))),
            h('td', { class: 'num' }, formatBytes(a.size)),
            h('td', {}, h('code', { class: 'hash', title: a.sha256 }, a.sha256)),
            h('td', {}, downloadButton(api, `${dir}/${a.path}`, a.size, onError)),
          ),
        ),
      ),
    ),
    ...(images.length ? [h('div', { class: 'artifact-images' }, images.map(([name, a]) => h('figure', { 'data-artifact': name }, imageView(api, `${dir}/${a.path}`, a.size, signal, 'artifact-image'), h('figcaption', {}, name))))] : []),
  );
  return box;
}

/** The typed output without its artifacts (shown above), or a note while there is none. */
export function resultSection(s: TaskStatus): HTMLElement {
  const { artifacts: _artifacts, ...rest } = s.result;
  return Object.keys(rest).length ? jsonView(rest) : notice(NO_RESULT[s.state], 'empty');
}

/** Upstream and downstream Task IDs as links. */
export function relationsSection(ctx: TaskContext): HTMLElement {
  const list = (label: string, ids: readonly string[]) =>
    h('div', { class: 'relation' }, h('dt', {}, label), h('dd', {}, ids.length ? ids.map((id) => h('a', { href: href(['tasks', id]) }, h('code', {}, id))) : '—'));
  return h('dl', { class: 'relations' }, list('upstream', ctx.relations.direct_upstream), list('downstream', ctx.relations.direct_downstream), ctx.relations.missing.length ? list('missing', ctx.relations.missing) : null);
}
