import type { PageContext } from '../app/page.js';
import { notice } from '../ui/dom.js';

export function renderTaskSubmit(container: HTMLElement, _ctx: PageContext, def: string | null): void {
  container.replaceChildren(notice(def ?? ''));
}
