import type { Api } from '../api/client.js';
import { h } from '../ui/dom.js';
import { href } from './router.js';
import { targetSelect } from './target-select.js';

/** Each section, and the Job it cannot work without (hidden from a token that may not call it). */
const SECTIONS = [
  ['tasks', 'Tasks', 'query_task_statuses'],
  ['jobs', 'Jobs', null],
  ['workspace', 'Workspace', 'list_entries'],
  ['machine', 'Machine', 'machine_status'],
  ['agent', 'Agent', 'agent_chat'],
] as const;

export interface Shell {
  readonly element: HTMLElement;
  readonly main: HTMLElement;
  /** Marks the current section in the navigation. */
  select(section: string): void;
}

/** The frame around every page: brand, navigation, machine selector and sign-out. */
export function buildShell(api: Api, handlers: { onTargetChange: () => void; onSignOut: () => void }): Shell {
  const links = SECTIONS.filter(([, , job]) => job === null || api.may(job)).map(([id, label]) => h('a', { href: href([id]), 'data-section': id }, label));
  const signedIn = api.signedIn;
  // Who is signed in and how much it may do; the list of its Jobs is the Jobs page.
  const who = signedIn?.token ? h('span', { class: 'muted signed-in', title: `${signedIn.jobs.size} Jobs` }, `Signed in as ${signedIn.token}`) : null;
  const signOut = h('button', { type: 'button', class: 'ghost' }, 'Sign out');
  signOut.addEventListener('click', handlers.onSignOut);
  const main = h('main', { id: 'main', tabindex: -1 });
  // A button, not an `#main` link: the hash is the router's.
  const skip = h('button', { type: 'button', class: 'skip' }, 'Skip to content');
  skip.addEventListener('click', () => main.focus());
  const element = h(
    'div',
    { class: 'shell' },
    skip,
    h(
      'header',
      { class: 'topbar' },
      h('a', { class: 'brand', href: href(['tasks']) }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'taskyard'),
      h('nav', { 'aria-label': 'Sections' }, links),
      h('div', { class: 'topbar-end' }, who, targetSelect(api, handlers.onTargetChange), signOut),
    ),
    main,
  );
  return {
    element,
    main,
    select(section) {
      for (const link of links) {
        if (link.dataset['section'] === section) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
      }
    },
  };
}
