import type { AgentBlock } from '../../../schemas/agent.js';
import type { AgentMessageEvent } from '../../../schemas/events.js';
import { h } from './dom.js';

type Patch = AgentMessageEvent['presentation'][number];

/** One drawn block: its element, where its text goes, and how a new payload changes it. */
interface Drawn {
  readonly element: HTMLElement;
  readonly body: HTMLElement;
  update(payload: Record<string, unknown>): void;
}

const json = (value: unknown) => JSON.stringify(value ?? {}, null, 2);

/** A tool call: the Job and its outcome in the summary, the arguments and the JobResponse inside. */
function toolBlock(payload: Record<string, unknown>): Drawn {
  const summary = h('summary', {});
  const args = h('pre', { class: 'code tool-args' });
  const answer = h('pre', { class: 'code tool-answer' });
  const element = h('details', { class: 'block block-tool' }, summary, h('div', { class: 'muted' }, 'Arguments'), args, h('div', { class: 'muted' }, 'Answer'), answer);
  const update = (p: Record<string, unknown>) => {
    const response = p['response'] as { success?: boolean; answer?: unknown } | undefined;
    const state = response === undefined ? 'running' : response.success ? 'ok' : 'failed';
    element.dataset['state'] = state;
    summary.replaceChildren('Job ', h('code', {}, String(p['job'] ?? '')), ' ', h('span', { class: `badge badge-${state === 'failed' ? 'fail' : state === 'ok' ? 'ok' : 'run'}` }, state));
    args.textContent = json(p['arguments']);
    answer.textContent = response === undefined ? '…' : typeof response.answer === 'string' ? response.answer : json(response.answer);
  };
  update(payload);
  return { element, body: answer, update };
}

/** The element for a new block of a type; thinking is folded away, errors are announced. */
function drawBlock(type: Patch['block_type'], payload: Record<string, unknown>): Drawn {
  if (type === 'tool') return toolBlock(payload);
  if (type === 'thinking') {
    const body = h('div', { class: 'block-body' });
    return { element: h('details', { class: 'block block-thinking' }, h('summary', {}, 'Thinking'), body), body, update: () => undefined };
  }
  const role = type === 'text' ? String(payload['role'] ?? 'assistant') : type;
  const body = h('div', { class: 'block-body' });
  const element = h('div', { class: `block block-${type} role-${role}`, ...(type === 'error' ? { role: 'alert' } : {}) }, body);
  return { element, body, update: () => undefined };
}

/**
 * Draws a conversation from presentation patches (SPEC.md: start, append, replace, finish) or
 * from stored blocks. Only text content, never HTML, goes into the page.
 */
export class BlockList {
  readonly element = h('div', { class: 'transcript', 'aria-live': 'polite' });
  readonly #blocks = new Map<string, Drawn>();

  clear(): void {
    this.#blocks.clear();
    this.element.replaceChildren();
  }

  /** Stored blocks of `get_agent_session`, in their final state. */
  show(blocks: readonly AgentBlock[]): void {
    for (const b of blocks) {
      const drawn = drawBlock(b.block_type, b.payload);
      if (b.block_type !== 'tool') drawn.body.textContent = b.text;
      drawn.element.dataset['done'] = 'true';
      this.element.append(drawn.element);
    }
  }

  apply(p: Patch): void {
    const key = p.block_id;
    if (p.operation === 'start') {
      const drawn = drawBlock(p.block_type, p.payload);
      this.#blocks.set(key, drawn);
      this.element.append(drawn.element);
      return;
    }
    const drawn = this.#blocks.get(key);
    if (!drawn) return;
    if (p.operation === 'append' && p.block_type !== 'tool') drawn.body.textContent += p.delta;
    if (p.operation === 'replace') {
      if (p.block_type !== 'tool') drawn.body.textContent = p.delta;
      drawn.update(p.payload);
    }
    if (p.operation === 'finish') {
      drawn.element.dataset['done'] = 'true';
      this.#blocks.delete(key);
    }
    drawn.element.scrollIntoView({ block: 'nearest' });
  }
}
