import { RuntimeError } from '../../core/errors.js';
import type { JobContext } from '../../core/job.js';
import type { JobRegistry } from '../../core/registry.js';
import type { AgentSessionInfo, AgentSessionView, SessionRecord } from '../../schemas/agent.js';
import type { AgentSection } from '../../schemas/config.js';
import { failed, ok, type JobResult } from '../../schemas/job-response.js';
import { newId, SessionStore } from './session-store.js';
import { historyOf } from './session-history.js';

/** The message of an unconfigured agent: the config keys a person has to set. */
export const NOT_CONFIGURED =
  'the agent is not configured: add an `agent` section to the service configuration with agent.backend (openai or anthropic), ' +
  'agent.base_url (e.g. http://127.0.0.1:8000/v1) and agent.model, optionally agent.api_key_env (the name of the environment variable holding the key), ' +
  'agent.max_steps and agent.tools, then restart the service';

/**
 * The model side (the `ai` SDK and its providers), loaded at the first turn: it costs several
 * hundred milliseconds of start-up that a service without an agent, or one not chatting yet,
 * should not pay.
 */
const loadEngine = async () => {
  const [backend, tools, turn] = await Promise.all([import('./backend.js'), import('./agent-tools.js'), import('./run-turn.js')]);
  return { createModel: backend.createModel, buildTools: tools.buildTools, runTurn: turn.runTurn };
};
type Engine = Awaited<ReturnType<typeof loadEngine>>;

/** A turn under way: how to stop it, and its end (records written). */
interface RunningTurn {
  readonly turnId: string;
  readonly controller: AbortController;
  done?: Promise<unknown>;
}

const record = (turnId: string, fields: Pick<SessionRecord, 'message' | 'turn'>): SessionRecord => ({ id: newId('m'), turn_id: turnId, created_at: new Date().toISOString(), ...fields });

/**
 * The agent actor: sessions on disk, at most one running turn per session, and the model behind
 * them. The registry arrives after every capability is built (the agent's tools are its Jobs).
 */
export class AgentService {
  readonly store: SessionStore;
  readonly #running = new Map<string, RunningTurn>();
  #registry: JobRegistry | undefined;

  constructor(
    workspace: string,
    private readonly agent: AgentSection | undefined,
    private readonly shutdown: AbortSignal,
  ) {
    this.store = new SessionStore(workspace);
  }

  attach(registry: JobRegistry): void {
    this.#registry = registry;
    // A listed tool the model will never see (a typo, or a Job not public without a token) is
    // said once at start, not discovered turn by turn.
    const missing = (this.agent?.tools ?? []).filter((name) => !registry.get(name));
    if (missing.length) console.warn(`taskyard: agent.tools: ${missing.join(', ')} ${missing.length === 1 ? 'is not a public Job' : 'are not public Jobs'} of this service; the agent cannot call ${missing.length === 1 ? 'it' : 'them'}`);
  }

  /** The agent section, or the business failure that names the keys to set. */
  configured(): AgentSection {
    if (!this.agent) throw new RuntimeError(NOT_CONFIGURED);
    return this.agent;
  }

  isRunning(sessionId: string): boolean {
    return this.#running.has(sessionId);
  }

  withRunning(info: AgentSessionInfo): AgentSessionView {
    return { ...info, running: this.isRunning(info.session_id) };
  }

  /** One turn of a session (a new one without `sessionId`); the answer is the final assistant text. */
  async chat(message: string, sessionId: string | undefined, ctx: JobContext): Promise<JobResult<string>> {
    const agent = this.configured();
    const engine = await loadEngine();
    const model = engine.createModel(agent);
    let id = sessionId;
    if (id !== undefined) await this.store.info(id);
    const busy = id === undefined ? undefined : this.#running.get(id);
    if (busy) throw new RuntimeError(`session ${id} is busy with turn ${busy.turnId}: wait for it to end, or stop it with cancel_agent_turn`);
    // Claimed before the next await, so two calls cannot both start a turn on one session.
    const turn: RunningTurn = { turnId: newId('t'), controller: new AbortController() };
    const claim = id ?? `new-${turn.turnId}`;
    this.#running.set(claim, turn);
    try {
      if (id === undefined) {
        id = (await this.store.create(message)).session_id;
        this.#running.delete(claim);
        this.#running.set(id, turn);
      }
      const run = this.#turn(id, turn, { agent, engine, model }, message, ctx);
      turn.done = run.catch(() => undefined);
      return await run;
    } finally {
      this.#running.delete(id ?? claim);
      this.#running.delete(claim);
    }
  }

  async #turn(id: string, turn: RunningTurn, setup: { agent: AgentSection; engine: Engine; model: ReturnType<Engine['createModel']> }, message: string, ctx: JobContext): Promise<JobResult<string>> {
    const { agent, engine, model } = setup;
    await this.store.checkRoom(id);
    const history = historyOf(await this.store.records(id));
    const user = record(turn.turnId, { message: { role: 'user', content: message } });
    await this.store.append(id, [user]);
    const outcome = await engine.runTurn({
      sessionId: id,
      agent,
      model,
      tools: this.#registry ? engine.buildTools(this.#registry, agent.tools, ctx.caller) : {},
      messages: [...history, { role: 'user', content: message }],
      userText: message,
      signal: AbortSignal.any([turn.controller.signal, ctx.signal, this.shutdown]),
      // A caller that left cannot take events; its leaving aborts the turn through the signal.
      emit: (event) => ctx.emit(event).catch(() => undefined),
    });
    const end = record(turn.turnId, { turn: { status: outcome.status, usage: outcome.usage, error: outcome.error } });
    await this.store.append(id, [...outcome.messages.map((m) => record(turn.turnId, { message: m as NonNullable<SessionRecord['message']> })), end]);
    const metadata = { session_id: id, model: agent.model, usage: outcome.usage, turn_id: turn.turnId, status: outcome.status };
    if (outcome.status === 'completed') return ok(outcome.answer, metadata);
    return failed(`${outcome.status === 'cancelled' ? 'CancelledError' : 'RuntimeError'}: ${outcome.error}`, metadata);
  }

  /** True when this call stopped a running turn (answered once its records are written). */
  async cancel(sessionId: string): Promise<boolean> {
    await this.store.info(sessionId);
    const turn = this.#running.get(sessionId);
    if (!turn || turn.controller.signal.aborted) return false;
    turn.controller.abort();
    await turn.done;
    return true;
  }

  async delete(sessionId: string): Promise<void> {
    const turn = this.#running.get(sessionId);
    if (turn) throw new RuntimeError(`session ${sessionId} has a running turn (${turn.turnId}): stop it with cancel_agent_turn, then delete`);
    await this.store.delete(sessionId);
  }

  /** Stops every turn and waits until each has recorded how it ended. */
  async close(): Promise<void> {
    const turns = [...this.#running.values()];
    for (const t of turns) t.controller.abort();
    await Promise.all(turns.map((t) => t.done));
  }
}
