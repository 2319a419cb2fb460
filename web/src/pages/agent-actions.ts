import { errorText, type Api } from '../api/client.js';
import type { AgentSessionInfo } from '../../../schemas/agent.js';
import { h } from '../ui/dom.js';

/** What the session bar asks of the page after an action. */
export interface SessionActionHooks {
  /** The session changed (renamed, tagged): redraw the list. */
  changed(): void;
  /** Go to another session (a fork), or to a new chat (null, after a delete). */
  open(sessionId: string | null): void;
  /** Show an error the service gave. */
  failed(message: string): void;
}

/**
 * The bar above a session's chat: its title and tag as editable fields, and Fork and Delete.
 * Each action is one Agent Job call.
 */
export function sessionActions(api: Api, info: AgentSessionInfo, hooks: SessionActionHooks): HTMLElement {
  const title = h('input', { name: 'title', value: info.title, 'aria-label': 'Session title' });
  const tag = h('input', { name: 'tag', value: info.tag ?? '', placeholder: 'tag', 'aria-label': 'Session tag', size: 12 });
  const run = async (job: string, args: Record<string, unknown>): Promise<AgentSessionInfo | null> => {
    try {
      return await api.answer<AgentSessionInfo>(job, { session_id: info.session_id, ...args });
    } catch (err) {
      hooks.failed(errorText(err));
      return null;
    }
  };
  const button = (label: string, onClick: () => Promise<void>, cls = 'ghost') => {
    const b = h('button', { type: 'button', class: cls }, label);
    b.addEventListener('click', () => void onClick());
    return b;
  };
  return h(
    'div',
    { class: 'session-actions' },
    title,
    button('Rename', async () => {
      if (await run('rename_agent_session', { title: title.value })) hooks.changed();
    }),
    tag,
    button('Set tag', async () => {
      if (await run('tag_agent_session', { tag: tag.value.trim() || null })) hooks.changed();
    }),
    button('Fork', async () => {
      const fork = await run('fork_agent_session', {});
      if (fork) hooks.open(fork.session_id);
    }),
    button('Delete', async () => {
      if (!confirm(`Delete the session "${info.title}" and all its messages?`)) return;
      if ((await run('delete_agent_session', {})) !== null) hooks.open(null);
    }, 'danger'),
  );
}
