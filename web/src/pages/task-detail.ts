import type { PageContext } from '../app/page.js';
import { notice } from '../ui/dom.js';

export function renderTaskDetail(container: HTMLElement, _ctx: PageContext, id: string): void {
  container.replaceChildren(notice(id));
}
