import type { PageContext } from '../app/page.js';
import { notice } from '../ui/dom.js';

export function renderTasks(container: HTMLElement, _ctx: PageContext): void {
  container.replaceChildren(notice('TODO'));
}
