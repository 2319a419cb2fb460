import type { TaskStatus, TaskStep } from '../api/types.js';
import { h } from './dom.js';
import { progressBar } from './progress-bar.js';

/** The instance name of a Task: the last part of `<type>#<registration>#<name>`. */
export function instanceName(taskId: string): string {
  const parts = taskId.split('#');
  return parts.length >= 3 ? parts.slice(2).join('#') : taskId;
}

/** A coloured state badge. */
export function stateBadge(state: string | null | undefined): HTMLElement {
  const s = state ?? 'unknown';
  return h('span', { class: `badge state-${s}`, 'data-state': s }, s);
}

/** The step that best tells how far a Task is: the last started one. */
export function currentStep(status: Pick<TaskStatus, 'steps'>): TaskStep | null {
  return status.steps.at(-1) ?? null;
}

/** Compact progress for a table cell: the current step's bar and name. */
export function progressCell(status: Pick<TaskStatus, 'steps' | 'state'>): Node | string {
  const step = currentStep(status);
  // A Task that records no steps has no progress to show (a full bar across the cell said nothing).
  if (!step) return '';
  const pct = step.finished_at && step.percentage === null ? 100 : step.percentage;
  return h('div', { class: 'cell-progress', title: `${step.name}${pct === null ? '' : ` ${Math.round(pct)} %`}` }, progressBar(pct, step.name), h('span', { class: 'muted' }, step.name));
}
