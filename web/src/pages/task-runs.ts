import type { Api } from '../api/client.js';
import { errorText } from '../api/client.js';
import type { TaskRuns } from '../api/types.js';
import { href } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { durationBetween, formatDuration, formatTime } from '../ui/format.js';
import { stateBadge } from '../ui/task-bits.js';

/** Why an attempt was tried again, in words. */
const CAUSES: Readonly<Record<string, string>> = {
  lost: 'its runner was lost',
  node_fail: 'its node failed',
  timeout: 'it hit its time limit',
  exit_code: 'its exit code is listed',
};

const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));

/**
 * The Runs card of a Task page: every attempt of the submission (a Task with a retry policy
 * keeps its task_id across them), with its outcome, why it was retried, and a link to its log.
 * A Task that ran once says so in one line.
 */
export async function runsSection(api: Api, taskId: string, signal: AbortSignal): Promise<HTMLElement> {
  if (!api.may('get_task_runs')) return notice('Your token may not read the run history (get_task_runs).', 'empty');
  let runs: TaskRuns['runs'];
  try {
    runs = (await api.answer<TaskRuns>('get_task_runs', { task_id: taskId }, { signal })).runs;
  } catch (err) {
    return notice(errorText(err), 'error');
  }
  if (runs.length <= 1) return notice('One run: nothing was retried.', 'empty');
  return h(
    'table',
    { class: 'runs-table' },
    h('thead', {}, h('tr', {}, ['#', 'state', 'ran', 'exit', 'retried because', 'log'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      runs.map((r) =>
        h(
          'tr',
          { 'data-run-id': r.run_id },
          h('td', { title: r.run_id }, String(r.attempt)),
          h('td', {}, stateBadge(r.state)),
          h('td', { title: `finished ${formatTime(r.finished_at)}` }, formatDuration(durationBetween(r.started_at, r.finished_at))),
          h('td', { title: r.error }, r.finished_at ? String(r.exit_code) : '—'),
          h('td', {}, r.retry ? `${CAUSES[r.retry.cause] ?? r.retry.cause}${r.retry.delay_s ? ` (after ${r.retry.delay_s} s)` : ''}` : '—'),
          h('td', {}, h('a', { href: href(['workspace'], { path: parentOf(r.log_path), file: r.log_path }) }, 'log')),
        ),
      ),
    ),
  );
}
