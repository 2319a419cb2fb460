import type { ModelMessage, ToolModelMessage } from 'ai';
import type { SessionRecord } from '../../schemas/agent.js';

type Part = { type?: unknown; toolCallId?: unknown; toolName?: unknown; providerExecuted?: unknown };

const partsOf = (content: unknown): Part[] => (Array.isArray(content) ? (content as Part[]) : []);

/** The tool message that answers calls stored without a result, so the model reads why. */
function missingResults(calls: ReadonlyMap<string, string>): ToolModelMessage {
  return {
    role: 'tool',
    content: [...calls].map(([toolCallId, toolName]) => ({
      type: 'tool-result',
      toolCallId,
      toolName,
      output: { type: 'error-text', value: `RuntimeError: the call ${toolCallId} of ${toolName} got no result (the turn that made it ended before one was stored)` },
    })),
  };
}

/**
 * The model messages of a session's records, sent back to the model on the next turn. A tool call
 * stored without its result (a turn that crashed, or one recorded by an older version) would make
 * the client library refuse every later turn: such a call gets an error result here, right where
 * the next message starts, so no stored session is left unusable.
 */
export function historyOf(records: readonly SessionRecord[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  const open = new Map<string, string>();
  const settle = () => {
    if (open.size === 0) return;
    out.push(missingResults(open));
    open.clear();
  };
  for (const { message } of records) {
    if (!message) continue;
    if (message.role !== 'tool') settle();
    for (const p of partsOf(message.content)) {
      if (message.role === 'assistant' && p.type === 'tool-call' && p.providerExecuted !== true && typeof p.toolCallId === 'string') open.set(p.toolCallId, String(p.toolName));
      if (message.role === 'tool' && p.type === 'tool-result' && typeof p.toolCallId === 'string') open.delete(p.toolCallId);
    }
    out.push(message as ModelMessage);
  }
  settle();
  return out;
}
