import { NoSuchToolError, type TextStreamPart, type ToolSet } from 'ai';
import type { AgentMessageEvent, JobEvent } from '../../schemas/events.js';
import { toolFailure } from './session-blocks.js';

type Patch = AgentMessageEvent['presentation'][number];
type BlockType = Patch['block_type'];

/** A block being drawn: its id, its type and the text received so far. */
interface OpenBlock {
  readonly block_id: string;
  readonly block_type: BlockType;
  text: string;
  payload: Record<string, unknown>;
}

/** The text and reasoning of a model step that has not finished, kept if the turn stops there. */
export type PartialContent = Array<{ type: 'text' | 'reasoning'; text: string }>;

/** The JobResponse shown for a call the client library refused before any Job ran. */
function refusal(job: string, error: unknown): Record<string, unknown> {
  const answer = NoSuchToolError.isInstance(error)
    ? `PermissionError: ${job} is not among the agent's tools (agent.tools)`
    : `ValueError: ${error instanceof Error ? error.message : String(error)}`;
  return { answer, success: false, metadata: {} };
}

/**
 * Turns the client library's stream parts into `agent_message` events with presentation patches
 * (SPEC.md): every block gets `start`, then `append`s, an authoritative `replace` and `finish`
 * last; `sequence` counts the turn's events from 0. It also keeps the unfinished step's text, so a
 * cancelled turn still records what was said.
 */
export class TurnPresenter {
  #sequence = 0;
  #blocks = 0;
  /** Open text and reasoning blocks by the stream's part id; tool blocks by tool call id. */
  readonly #open = new Map<string, OpenBlock>();
  /** Why the client library refused a call, by tool call id (its `tool-error` part carries only text). */
  readonly #refused = new Map<string, Record<string, unknown>>();
  #stepParts: PartialContent = [];
  #stepText = '';

  constructor(
    private readonly sessionId: string,
    private readonly emit: (event: JobEvent) => Promise<void>,
  ) {}

  /** Text of the latest model step: the turn's answer once the stream ended normally. */
  get answer(): string {
    return this.#stepText;
  }

  /** What the unfinished step said so far (empty after a finished step). */
  get partial(): PartialContent {
    return this.#stepParts.filter((p) => p.text.length > 0);
  }

  async #send(typeName: string, message: Record<string, unknown>, presentation: Patch[]): Promise<void> {
    await this.emit({ kind: 'agent_message', session_id: this.sessionId, type_name: typeName, message, sequence: this.#sequence++, presentation });
  }

  #start(key: string, block_type: BlockType, payload: Record<string, unknown>): Patch {
    const block = { block_id: `b${this.#blocks++}`, block_type, text: '', payload };
    this.#open.set(key, block);
    return { operation: 'start', block_id: block.block_id, block_type, delta: '', payload };
  }

  #append(key: string, delta: string): Patch[] {
    const block = this.#open.get(key);
    if (!block) return [];
    block.text += delta;
    return [{ operation: 'append', block_id: block.block_id, block_type: block.block_type, delta, payload: {} }];
  }

  /** `replace` with the whole content, then `finish`. */
  #close(key: string, payload?: Record<string, unknown>): Patch[] {
    const block = this.#open.get(key);
    if (!block) return [];
    this.#open.delete(key);
    const final = payload ?? block.payload;
    return [
      { operation: 'replace', block_id: block.block_id, block_type: block.block_type, delta: block.text, payload: final },
      { operation: 'finish', block_id: block.block_id, block_type: block.block_type, delta: '', payload: {} },
    ];
  }

  /** The patches of a block drawn whole at once. */
  #whole(block_type: BlockType, text: string, payload: Record<string, unknown>): Patch[] {
    const key = `whole-${this.#blocks}`;
    return [this.#start(key, block_type, payload), ...this.#append(key, text), ...this.#close(key)];
  }

  /** The caller's message, first event of the turn. */
  user(text: string): Promise<void> {
    return this.#send('user', { text }, this.#whole('text', text, { role: 'user' }));
  }

  /** A failure the user should see (backend down, step limit ...). */
  error(message: string): Promise<void> {
    return this.#send('error', { message }, this.#whole('error', message, { message }));
  }

  /** A note from the service (the turn was cancelled). */
  system(message: string): Promise<void> {
    return this.#send('system', { message }, this.#whole('system', message, {}));
  }

  /** Finishes every block left open (a stream that stopped mid-text); `finish` stays last. */
  async closeOpen(): Promise<void> {
    const patches = [...this.#open.keys()].flatMap((key) => this.#close(key));
    if (patches.length) await this.#send('interrupted', {}, patches);
  }

  async handle(part: TextStreamPart<ToolSet>): Promise<void> {
    switch (part.type) {
      case 'start-step':
        this.#stepParts = [];
        this.#stepText = '';
        return;
      case 'finish-step':
        this.#stepParts = [];
        return;
      case 'reasoning-start':
      case 'text-start': {
        const type = part.type === 'text-start' ? 'text' : 'reasoning';
        this.#stepParts.push({ type, text: '' });
        return this.#send(part.type, { id: part.id }, [this.#start(part.id, type === 'text' ? 'text' : 'thinking', type === 'text' ? { role: 'assistant' } : {})]);
      }
      case 'reasoning-delta':
      case 'text-delta': {
        const last = this.#stepParts.at(-1);
        if (last) last.text += part.text;
        if (part.type === 'text-delta') this.#stepText += part.text;
        return this.#send(part.type, { id: part.id, text: part.text }, this.#append(part.id, part.text));
      }
      case 'reasoning-end':
      case 'text-end':
        return this.#send(part.type, { id: part.id }, this.#close(part.id));
      case 'tool-call': {
        const payload = { job: part.toolName, arguments: part.input, tool_call_id: part.toolCallId };
        if (part.invalid) this.#refused.set(part.toolCallId, refusal(part.toolName, part.error));
        return this.#send('tool-call', payload, [this.#start(part.toolCallId, 'tool', payload)]);
      }
      case 'tool-result':
      case 'tool-error': {
        const response = part.type === 'tool-result' ? part.output : (this.#refused.get(part.toolCallId) ?? refusal(part.toolName, part.error));
        const payload = { job: part.toolName, arguments: part.input, tool_call_id: part.toolCallId, response };
        const opened = this.#open.has(part.toolCallId) ? [] : [this.#start(part.toolCallId, 'tool', payload)];
        // A failed Job also gets an error block, so a tool error stands out like a backend error.
        const failure = toolFailure(part.toolName, response);
        const error = failure === null ? [] : this.#whole('error', failure, { message: failure, job: part.toolName, tool_call_id: part.toolCallId });
        return this.#send(part.type, payload, [...opened, ...this.#close(part.toolCallId, payload), ...error]);
      }
      default:
        return;
    }
  }
}
