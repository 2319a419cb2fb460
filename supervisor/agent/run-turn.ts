import { stepCountIs, streamText, type LanguageModel, type ModelMessage, type TextStreamPart, type ToolSet } from 'ai';
import type { AgentSection } from '../../schemas/config.js';
import type { JobEvent } from '../../schemas/events.js';
import type { TokenUsage, TurnStatus } from '../../schemas/agent.js';
import { describeBackendError } from './backend.js';
import { TurnPresenter } from './turn-presenter.js';

export interface TurnInput {
  readonly sessionId: string;
  readonly agent: AgentSection;
  readonly model: LanguageModel;
  readonly tools: ToolSet;
  /** The session's messages before this turn, the caller's new message last. */
  readonly messages: ModelMessage[];
  readonly userText: string;
  /** Aborted by `cancel_agent_turn`, a caller that went away, or the service stopping. */
  readonly signal: AbortSignal;
  readonly emit: (event: JobEvent) => Promise<void>;
}

/** How a turn ended: what to record and what to answer. */
export interface TurnOutcome {
  readonly status: TurnStatus;
  readonly answer: string;
  readonly usage: TokenUsage;
  /** The assistant and tool messages the turn produced, an unfinished step's text included. */
  readonly messages: ModelMessage[];
  /** Why the turn did not complete, in words a person can act on; null when it did. */
  readonly error: string | null;
}

/** The most a model may say in one turn (text, reasoning and tool-call arguments, in characters). */
export const TURN_OUTPUT_LIMIT = 4 * 1024 * 1024;

/** What a stream part adds to the turn's output, in characters. */
function outputOf(part: TextStreamPart<ToolSet>): number {
  if (part.type === 'text-delta' || part.type === 'reasoning-delta') return part.text.length;
  if (part.type === 'tool-input-delta') return part.delta.length;
  return 0;
}

const OVERFLOW =
  `the model server sent more than ${TURN_OUTPUT_LIMIT / 1024 / 1024} MiB of output in one turn (text, reasoning and tool-call arguments together), ` +
  'the most a turn may produce: the unfinished step was dropped and the session keeps everything before it; ask for a shorter answer';

const DEFAULT_SYSTEM =
  'You are the research assistant of a taskyard Job Execution Service. Answer from what the tools return; ' +
  'each tool is one of the service\'s Jobs and answers a JobResponse {answer, success, metadata}.';

/**
 * Runs one turn: streams the model through the client library, lets it call the service's Jobs
 * up to `agent.max_steps` steps, draws everything as `agent_message` events, and says how the
 * turn ended. Never throws for the model's or the server's sake: those become the outcome.
 */
export async function runTurn(input: TurnInput): Promise<TurnOutcome> {
  const { agent, signal } = input;
  const presenter = new TurnPresenter(input.sessionId, input.emit);
  await presenter.user(input.userText);
  let finished: ModelMessage[] = [];
  let failure: unknown;
  let lastFinish: string | undefined;
  let steps = 0;
  const usage = { input_tokens: 0, output_tokens: 0, known: false };
  // Stops the model when the turn's output passes TURN_OUTPUT_LIMIT (checked before a part is
  // drawn, so the flood reaches neither the caller nor the session).
  const overflow = new AbortController();
  let said = 0;
  try {
    const result = streamText({
      model: input.model,
      system: agent.system_prompt ?? DEFAULT_SYSTEM,
      messages: input.messages,
      tools: input.tools,
      stopWhen: stepCountIs(agent.max_steps),
      maxRetries: agent.max_retries,
      abortSignal: AbortSignal.any([signal, overflow.signal]),
      onStepFinish: (step) => {
        finished = step.response.messages;
      },
      // Errors arrive as `error` parts below; the default handler would only log them.
      onError: () => undefined,
    });
    for await (const part of result.fullStream) {
      said += outputOf(part);
      if (said > TURN_OUTPUT_LIMIT) {
        overflow.abort();
        break;
      }
      if (part.type === 'error') failure ??= part.error;
      if (part.type === 'finish-step') {
        steps++;
        lastFinish = part.finishReason;
        if (part.usage.inputTokens !== undefined || part.usage.outputTokens !== undefined) usage.known = true;
        usage.input_tokens += part.usage.inputTokens ?? 0;
        usage.output_tokens += part.usage.outputTokens ?? 0;
      }
      await presenter.handle(part);
    }
  } catch (err) {
    if (!signal.aborted && !overflow.signal.aborted) failure ??= err;
  }
  await presenter.closeOpen();
  const partial = overflow.signal.aborted ? [] : presenter.partial;
  const messages: ModelMessage[] = partial.length ? [...finished, { role: 'assistant', content: partial }] : finished;
  const tokens: TokenUsage = usage.known ? { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens } : { input_tokens: null, output_tokens: null };
  const end = (status: TurnStatus, error: string | null): TurnOutcome => ({ status, answer: presenter.answer, usage: tokens, messages, error });
  if (signal.aborted) {
    await presenter.system('The turn was cancelled; what was said so far is kept in the session.');
    return end('cancelled', 'the turn was cancelled; what was said so far is kept in the session');
  }
  if (overflow.signal.aborted) {
    await presenter.error(OVERFLOW);
    return end('failed', OVERFLOW);
  }
  if (failure !== undefined) {
    const message = describeBackendError(failure, agent);
    await presenter.error(message);
    return end('failed', message);
  }
  if (lastFinish === 'tool-calls' && steps >= agent.max_steps) {
    const message = `the turn stopped after agent.max_steps (${agent.max_steps}) model steps without a final answer: ask the agent to go on, or raise agent.max_steps`;
    await presenter.error(message);
    return end('failed', message);
  }
  return end('completed', null);
}
