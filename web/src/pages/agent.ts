import { errorText } from '../api/client.js';
import type { AgentBlock, AgentSessionInfo } from '../../../schemas/agent.js';
import type { PageContext } from '../app/page.js';
import { href } from '../app/router.js';
import { BlockList } from '../ui/agent-blocks.js';
import { h, notice } from '../ui/dom.js';
import { timeLabel } from '../ui/format.js';
import { sessionActions } from './agent-actions.js';

type Listed = AgentSessionInfo & { running: boolean };
type Detail = Listed & { blocks: AgentBlock[] };

/**
 * The Agent page: the sessions list on the left; on the right the chosen session's chat, redrawn
 * from its stored blocks, where a new turn streams its `agent_message` patches as they come.
 * Stop cancels the turn (`cancel_agent_turn`); what was said stays.
 */
export function renderAgent(container: HTMLElement, ctx: PageContext): void {
  const { api } = ctx;
  let sessionId: string | null = ctx.location.segments[1] ?? null;
  let turn: AbortController | null = null;
  const list = h('nav', { class: 'session-list', 'aria-label': 'Agent sessions' });
  const head = h('div', { class: 'session-head' });
  const blocks = new BlockList();
  const message = h('textarea', { name: 'message', rows: 3, placeholder: 'Ask the assistant… (Ctrl+Enter sends)', 'aria-label': 'Message' });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send');
  const stop = h('button', { type: 'button', class: 'danger', disabled: true }, 'Stop');
  const status = h('div', { class: 'muted', 'aria-live': 'polite' });
  const form = h('form', { class: 'composer' }, message, h('div', { class: 'composer-buttons' }, send, stop), status);
  container.replaceChildren(h('div', { class: 'split agent' }, list, h('section', { class: 'chat card', 'aria-label': 'Chat' }, head, blocks.element, form)));

  const fail = (text: string) => status.replaceChildren(notice(text, 'error'));
  const go = (id: string | null) => history.replaceState(null, '', href(id ? ['agent', id] : ['agent']));

  async function loadList(): Promise<void> {
    try {
      const sessions = await api.answer<Listed[]>('list_agent_sessions', { limit: 200 }, { signal: ctx.signal });
      const newChat = h('button', { type: 'button', class: 'primary' }, 'New chat');
      newChat.addEventListener('click', () => void open(null));
      const items = sessions.map((s) => {
        const link = h('a', { href: href(['agent', s.session_id]), 'aria-current': s.session_id === sessionId ? 'page' : undefined, 'data-session': s.session_id }, h('span', { class: 'session-title' }, s.title), h('small', {}, s.tag ? h('span', { class: 'tag' }, s.tag) : null, s.running ? ' running · ' : ' ', timeLabel(s.updated_at)));
        return h('li', {}, link);
      });
      list.replaceChildren(newChat, sessions.length ? h('ul', {}, items) : notice('No sessions yet.', 'empty'));
    } catch (err) {
      list.replaceChildren(notice(errorText(err), 'error'));
    }
  }

  /** Counts session loads: a load that a newer one, or a turn begun meanwhile, made stale shows nothing. */
  let loads = 0;

  async function open(id: string | null): Promise<void> {
    const load = ++loads;
    // Drawing the same session again (a turn ended, it was renamed) keeps what is shown until the
    // stored blocks replace it at once: emptied first, the conversation blinked out under the reader.
    const redraw = id !== null && id === sessionId;
    sessionId = id;
    go(id);
    if (!redraw) {
      blocks.clear();
      head.replaceChildren(h('h2', {}, id ? 'Loading…' : 'New chat'));
    }
    status.replaceChildren();
    void loadList();
    if (!id) return;
    try {
      const detail = await api.answer<Detail>('get_agent_session', { session_id: id, limit: 1000 }, { signal: ctx.signal });
      // A turn sent while this was read streams into the view; its end reads the session again.
      if (load !== loads) return;
      const actions = sessionActions(api, detail, { changed: () => void open(id), open: (next) => void open(next), failed: fail });
      if (redraw) keepTyped(head, actions);
      head.replaceChildren(h('h2', {}, detail.title), actions);
      blocks.clear();
      blocks.show(detail.blocks);
    } catch (err) {
      head.replaceChildren(notice(errorText(err), 'error'));
    }
  }

  async function chat(): Promise<void> {
    const text = message.value.trim();
    if (!text || turn) return;
    turn = new AbortController();
    loads++;
    const abort = () => turn?.abort();
    ctx.signal.addEventListener('abort', abort, { once: true });
    send.disabled = true;
    stop.disabled = false;
    message.value = '';
    status.replaceChildren('The assistant is working…');
    try {
      const result = await api.stream('agent_chat', { message: text, ...(sessionId ? { session_id: sessionId } : {}) }, (event) => {
        if (event.kind !== 'agent_message') return;
        if (!sessionId) {
          sessionId = event.session_id;
          head.replaceChildren(h('h2', {}, text.slice(0, 60)));
          go(sessionId);
          void loadList();
        }
        for (const p of event.presentation) blocks.apply(p);
      }, turn.signal);
      status.replaceChildren(result.success ? '' : notice(String(result.answer), 'error'));
    } catch (err) {
      if (!ctx.signal.aborted) fail(errorText(err));
    } finally {
      ctx.signal.removeEventListener('abort', abort);
      turn = null;
      send.disabled = false;
      stop.disabled = true;
    }
    if (!ctx.signal.aborted && sessionId) void open(sessionId);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void chat();
  });
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void chat();
  });
  stop.addEventListener('click', () => {
    if (!sessionId) return turn?.abort();
    stop.disabled = true;
    api.answer<boolean>('cancel_agent_turn', { session_id: sessionId }).catch((err: unknown) => fail(errorText(err)));
  });
  void open(sessionId);
}

/**
 * What the reader typed into the title and tag boxes of `from` and has not applied yet, put into
 * the same boxes of `into`: a redraw at a turn's end must not wipe a rename being typed.
 */
function keepTyped(from: Element, into: Element): void {
  for (const typed of from.querySelectorAll<HTMLInputElement>('.session-actions input')) {
    if (typed.value === typed.defaultValue) continue;
    const box = into.querySelector<HTMLInputElement>(`input[name="${typed.name}"]`);
    if (box) box.value = typed.value;
  }
}
