import { errorText } from '../api/client.js';
import { TERMINAL_STATES, type TaskContext, type TaskStatus, type TaskStep } from '../api/types.js';
import { sleep, type PageContext } from '../app/page.js';
import { href, navigate } from '../app/router.js';
import { h, notice } from '../ui/dom.js';
import { jsonView } from '../ui/highlight.js';
import { lineageGraph } from '../ui/lineage-graph.js';
import { LogWindow } from '../ui/log-window.js';
import { instanceName, stateBadge } from '../ui/task-bits.js';
import { followTask, logReader } from './task-follow.js';
import { MetricsPanel } from './task-metrics.js';
import { runsSection } from './task-runs.js';
import { artifactsSection, overviewSection, relationsSection, resultSection, slurmJobFacts, stepsSection } from './task-sections.js';

/** How often a followed Task's status is re-read when nothing else says it changed (ms). */
const STATUS_SAFETY_MS = 2000;

/** A lineage box's link: the detail page of its Task. */
const taskLink = (taskId: string): string => href(['tasks', taskId]);

function card(title: string, body: Node, extra?: Node): HTMLElement {
  return h('section', { class: 'card', 'aria-label': title }, h('h2', {}, title, extra ?? null), body);
}

/**
 * One Task: status, steps, metrics, the live log, output, artifacts, metadata and lineage, with cancel
 * and delete. While the Task is active the page follows it through `stream_task`; when it ends
 * the page reloads its context once.
 */
export function renderTaskDetail(container: HTMLElement, ctx: PageContext, taskId: string): void {
  const { api, signal } = ctx;
  const log = new LogWindow(logReader(api, taskId, signal));
  const metrics = new MetricsPanel(api, taskId, signal);
  const head = h('div', { class: 'page-head' });
  const message = h('div', { role: 'status' });
  const slots = { overview: h('div', {}), steps: h('div', {}), result: h('div', {}), artifacts: h('div', {}), metadata: h('div', {}), lineage: h('div', { class: 'lineage-wrap' }), input: h('div', {}), engine: h('div', {}), runs: h('div', {}) };
  const steps = new Map<string, TaskStep>();
  let following = false;

  container.replaceChildren(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: href(['tasks']) }, 'Tasks'), ' / ', h('code', {}, taskId)),
    head,
    message,
    h(
      'div',
      { class: 'detail-grid' },
      h('div', { class: 'detail-main' }, card('Steps', slots.steps), card('Metrics', metrics.element), card('Log', log.element), card('Result', slots.result), card('Artifacts', slots.artifacts), card('Lineage', slots.lineage)),
      h('div', { class: 'detail-side' }, card('Status', h('div', {}, slots.overview, slots.engine)), card('Runs', slots.runs), card('Input', slots.input), card('Metadata', slots.metadata)),
    ),
  );

  const action = (label: string, cls: string, run: () => Promise<void>) => {
    const button = h('button', { type: 'button', class: cls }, label);
    button.addEventListener('click', () => {
      button.disabled = true;
      run()
        .catch((err: unknown) => message.replaceChildren(notice(errorText(err), 'error')))
        .finally(() => (button.disabled = false));
    });
    return button;
  };

  function showHead(s: TaskStatus): void {
    const active = !TERMINAL_STATES.has(s.state);
    const cancel = action('Cancel', 'danger', async () => {
      if (!confirm(`Cancel ${taskId}? Its process is stopped and the Task ends as cancelled.`)) return;
      const cancelled = await api.answer<boolean>('cancel', { task_id: taskId });
      message.replaceChildren(notice(cancelled ? 'Cancellation requested.' : 'Nothing to cancel: the Task is not running under this service.'));
      if (!following) await load();
    });
    cancel.disabled = !active;
    const remove = action('Delete', 'danger', async () => {
      if (!confirm(`Delete ${taskId} and its files?`)) return;
      const deleted = await api.answer<string[]>('delete_tasks', { task_ids: [taskId] });
      if (deleted.includes(taskId)) navigate(href(['tasks']));
      else message.replaceChildren(notice('Not deleted: only finished Tasks can be deleted.', 'error'));
    });
    remove.disabled = active;
    const rerun = h('a', { class: 'button', href: href(['tasks', 'new', s.task_name], { from: taskId }), title: 'Open the submit form with these inputs; the new Task lists this one in source_tasks' }, 'Run again…');
    // Only what the signed-in token may do is offered.
    const actions = [api.may('submit') ? rerun : null, api.may('cancel') ? cancel : null, api.may('delete_tasks') ? remove : null];
    const by = submittedBy ? h('span', { class: 'muted submitted-by' }, `submitted by ${submittedBy}`) : null;
    head.replaceChildren(h('h1', {}, instanceName(taskId)), stateBadge(s.state), h('span', { class: 'muted' }, s.task_type === s.task_name ? s.task_type : `${s.task_type} · ${s.task_name}`), ...(by ? [by] : []), h('div', { class: 'actions' }, ...actions));
  }

  // The graph is read once per load; the selected node shows the state the page follows.
  let graph: TaskContext['graph'] | null = null;
  // Everything drawn from the status itself changes together: a head saying "succeeded" next to
  // a Result card still saying "not started" was seen while a followed Task ended.
  function showStatus(s: TaskStatus): void {
    showHead(s);
    // A result cache hit did not run: beside its state, a badge links the Task its result came from.
    if (cachedFrom) head.querySelector('[data-state]')?.after(h('a', { class: 'badge cache-hit', href: taskLink(cachedFrom), title: `Answered from the result cache: ${cachedFrom}` }, `cache hit · ${instanceName(cachedFrom)}`));
    slots.overview.replaceChildren(overviewSection(s));
    slots.result.replaceChildren(resultSection(s));
    slots.lineage.querySelector('svg.lineage')?.replaceWith(...(graph ? [lineageGraph(graph, taskLink, s.state)] : []));
  }

  // While following, progress events say something changed: re-read the status (from the
  // service's memory, cheap) at most every 500 ms so state, pid and times stay current.
  let statusTimer: ReturnType<typeof setTimeout> | undefined;
  function refreshStatusSoon(): void {
    statusTimer ??= setTimeout(() => {
      api
        .answer<TaskStatus>('status', { task_id: taskId }, { signal })
        .then((s) => following && showStatus(s))
        .catch(() => undefined)
        .finally(() => (statusTimer = undefined));
    }, 500);
  }
  signal.addEventListener('abort', () => clearTimeout(statusTimer), { once: true });

  /**
   * A Task that reports no steps sends no progress events (a plain command): while following,
   * its status is also re-read on a slow timer, so the page sees it leave `queued`.
   */
  async function refreshStatusSlowly(): Promise<void> {
    while (following && !signal.aborted) {
      await sleep(STATUS_SAFETY_MS, signal);
      if (following) refreshStatusSoon();
    }
  }

  let lastState: TaskStatus['state'] = 'queued';
  function showSteps(state = lastState): void {
    lastState = state;
    slots.steps.replaceChildren(stepsSection([...steps.values()], state));
  }

  async function showMetadata(c: TaskContext): Promise<void> {
    if (c.status.state !== 'succeeded') return slots.metadata.replaceChildren(notice('Written when the Task succeeds.', 'empty'));
    if (!api.may('preview_file')) return slots.metadata.replaceChildren(notice('Your token may not read files (preview_file).', 'empty'));
    try {
      const preview = await api.answer<{ data?: unknown; content?: string }>('preview_file', { path: c.metadata_path }, { signal });
      slots.metadata.replaceChildren(jsonView(preview.data ?? preview.content));
    } catch (err) {
      slots.metadata.replaceChildren(notice(errorText(err), 'error'));
    }
  }

  /** The Slurm job of this run, when the slurm executor ran it (`slurm_job.json` beside the record). */
  async function showSlurmJob(s: TaskStatus): Promise<void> {
    if (!api.may('preview_file')) return;
    const path = s.log_path.replace(/task\.log$/, 'slurm_job.json');
    const preview = await api.answer<{ data?: { job_id?: unknown; run_id?: unknown } }>('preview_file', { path }, { signal }).catch(() => null);
    const job = preview?.data?.run_id === s.run_id ? preview.data.job_id : undefined;
    slots.engine.replaceChildren(...(typeof job === 'string' ? [slurmJobFacts(job)] : []));
  }

  /** The name of the token that submitted the run, as get_task_context tells it (metadata.submitted_by). */
  let submittedBy: string | null = null;
  /** The Task a result cache hit was answered from (metadata.cached_from). */
  let cachedFrom: string | null = null;

  async function load(): Promise<void> {
    const res = await api.call<TaskContext>('get_task_context', { task_id: taskId }, { signal });
    if (!res.success) throw new Error(typeof res.answer === 'string' ? res.answer : JSON.stringify(res.answer));
    const c = res.answer;
    const by = res.metadata['submitted_by'];
    submittedBy = typeof by === 'string' ? by : null;
    const source = res.metadata['cached_from'];
    cachedFrom = typeof source === 'string' ? source : null;
    if (signal.aborted) return;
    graph = c.graph;
    slots.lineage.replaceChildren(lineageGraph(c.graph, taskLink, c.status.state), relationsSection(c));
    showStatus(c.status);
    void showSlurmJob(c.status);
    steps.clear();
    for (const s of c.status.steps) steps.set(s.name, s);
    showSteps(c.status.state);
    slots.artifacts.replaceChildren(artifactsSection(c.status, api, signal));
    slots.input.replaceChildren(jsonView(c.status.config));
    void showMetadata(c);
    void runsSection(api, taskId, signal).then((runs) => slots.runs.replaceChildren(runs));
    void metrics.refresh();
    if (!TERMINAL_STATES.has(c.status.state) && !following) {
      following = true;
      void metrics.follow(() => following);
      void refreshStatusSlowly();
      void followTask(api, taskId, log, { onStep: (s) => (steps.set(s.name, s), showSteps(), refreshStatusSoon()), onEnd: () => void load().finally(() => (following = false)) }, signal);
    } else if (TERMINAL_STATES.has(c.status.state)) {
      // A finished Task: its tail at first, or whatever was written after the stream ended.
      await log.add(await logReader(api, taskId, signal)(log.end < 0 ? -1 : log.end, log.end < 0 ? 65_536 : 262_144));
    }
  }

  load().catch((err: unknown) => {
    if (!signal.aborted) container.replaceChildren(h('nav', { class: 'crumbs' }, h('a', { href: href(['tasks']) }, 'Tasks')), notice(errorText(err), 'error'));
  });
}
