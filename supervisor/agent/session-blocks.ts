import type { AgentBlock, SessionRecord } from '../../schemas/agent.js';

/** The error block text of a tool call whose JobResponse failed, or null when it succeeded. */
export function toolFailure(job: unknown, response: unknown): string | null {
  const r = response as { success?: unknown; answer?: unknown } | null | undefined;
  if (r?.success !== false) return null;
  return `${String(job)} failed: ${typeof r.answer === 'string' ? r.answer : JSON.stringify(r.answer)}`;
}

type Part = { type?: unknown; text?: unknown; toolCallId?: unknown; toolName?: unknown; input?: unknown; output?: unknown };

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Part[]) : [];
}

/** A stored tool output as the JobResponse the console shows (error outputs become failures). */
function responseOf(output: unknown): unknown {
  const o = output as { type?: unknown; value?: unknown } | undefined;
  if (o?.type === 'json') return o.value;
  if (o?.type === 'error-text' || o?.type === 'error-json') return { answer: o.value, success: false, metadata: {} };
  return o?.value ?? output;
}

/**
 * The presentation blocks that redraw stored records, in their final state: the same block types
 * and payloads the live `agent_message` patches build (user and assistant text, thinking, tool
 * calls with their Job, arguments and JobResponse, and how a turn that did not complete ended).
 */
export function blocksOf(records: readonly SessionRecord[]): AgentBlock[] {
  const blocks: AgentBlock[] = [];
  const tools = new Map<string, AgentBlock>();
  for (const r of records) {
    if (r.turn) {
      if (r.turn.status === 'failed') blocks.push({ block_id: `${r.id}:0`, block_type: 'error', text: r.turn.error ?? '', payload: { message: r.turn.error } });
      if (r.turn.status === 'cancelled') blocks.push({ block_id: `${r.id}:0`, block_type: 'system', text: 'The turn was cancelled.', payload: {} });
      continue;
    }
    if (!r.message) continue;
    partsOf(r.message.content).forEach((p, i) => {
      const block_id = `${r.id}:${i}`;
      if (p.type === 'text' && typeof p.text === 'string') blocks.push({ block_id, block_type: 'text', text: p.text, payload: { role: r.message!.role } });
      else if (p.type === 'reasoning' && typeof p.text === 'string') blocks.push({ block_id, block_type: 'thinking', text: p.text, payload: {} });
      else if (p.type === 'tool-call' && typeof p.toolCallId === 'string') {
        const block: AgentBlock = { block_id, block_type: 'tool', text: '', payload: { job: p.toolName, arguments: p.input, tool_call_id: p.toolCallId } };
        tools.set(p.toolCallId, block);
        blocks.push(block);
      } else if (p.type === 'tool-result' && typeof p.toolCallId === 'string') {
        const block = tools.get(p.toolCallId);
        if (!block) return;
        block.payload['response'] = responseOf(p.output);
        const failure = toolFailure(block.payload['job'], block.payload['response']);
        if (failure !== null) blocks.push({ block_id, block_type: 'error', text: failure, payload: { message: failure, job: block.payload['job'], tool_call_id: p.toolCallId } });
      }
    });
  }
  return blocks;
}

/**
 * The page of a session's messages (`offset`/`limit` count messages), with the turn ends that
 * follow a message of the page, so the page redraws whole.
 */
export function pageOf(records: readonly SessionRecord[], offset: number, limit: number): SessionRecord[] {
  const page: SessionRecord[] = [];
  let index = -1;
  let lastTurn: string | null = null;
  for (const r of records) {
    if (r.message) {
      index++;
      const inside = index >= offset && index < offset + limit;
      if (inside) page.push(r);
      lastTurn = inside ? r.turn_id : null;
    } else if (r.turn && r.turn_id === lastTurn) {
      page.push(r);
    }
  }
  return page;
}
