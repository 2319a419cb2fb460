import { defineJob, type Job } from '../../core/job.js';
import { Type } from '../../vendor/typebox.js';
import { AgentChatArgs, AgentSessionPage, AgentSessionView, ForkSessionArgs, GetSessionArgs, ListSessionsArgs, RenameSessionArgs, SessionArgs, TagSessionArgs } from '../../schemas/agent.js';
import { ok } from '../../schemas/job-response.js';
import type { AgentService } from './agent-service.js';
import { blocksOf, pageOf } from './session-blocks.js';

/**
 * The Agent Jobs. Every one first asks for the `agent` section, so an unconfigured service
 * answers each with the keys to set. Over `/events`, `agent_chat` streams `agent_message` events;
 * over JSON and MCP it answers the final text alone.
 */
export function agentJobs(agent: AgentService): Job[] {
  const { store } = agent;
  return [
    defineJob({
      name: 'agent_chat',
      output: Type.String({ description: 'The final text of the turn' }),
      description: 'Sends a message to the research assistant and answers its final text (metadata: session_id, model, usage, turn_id). Omit session_id to start a new session. Streamed, the turn sends agent_message events as it goes: thinking, text, and each Job the assistant calls.',
      input: AgentChatArgs,
      run: (args, ctx) => agent.chat(args.message, args.session_id, ctx),
    }),
    defineJob({
      name: 'list_agent_sessions',
      output: Type.Array(AgentSessionView),
      description: 'Lists agent sessions, newest activity first: session_id, title, tag, created_at, updated_at, message_count, running (metadata.total counts them all).',
      input: ListSessionsArgs,
      run: async (args) => {
        agent.configured();
        const all = await store.list();
        return ok(all.slice(args.offset, args.offset + args.limit).map((i) => agent.withRunning(i)), { total: all.length });
      },
    }),
    defineJob({
      name: 'get_agent_session',
      output: AgentSessionPage,
      description: 'Answers a session\'s info, a page of its messages (limit/offset count messages) and the presentation blocks that redraw that page.',
      input: GetSessionArgs,
      run: async (args) => {
        agent.configured();
        const info = agent.withRunning(await store.info(args.session_id));
        const page = pageOf(await store.records(args.session_id), args.offset, args.limit);
        const messages = page.flatMap((r) => (r.message ? [{ id: r.id, turn_id: r.turn_id, created_at: r.created_at, role: r.message.role, content: r.message.content }] : []));
        return ok({ ...info, messages, blocks: blocksOf(page) }, { session_id: info.session_id });
      },
    }),
    defineJob({
      name: 'rename_agent_session',
      output: AgentSessionView,
      description: 'Sets a session\'s title; answers the session info.',
      input: RenameSessionArgs,
      run: async (args) => {
        agent.configured();
        return ok(agent.withRunning(await store.update(args.session_id, () => ({ title: args.title }))), { session_id: args.session_id });
      },
    }),
    defineJob({
      name: 'tag_agent_session',
      output: AgentSessionView,
      description: 'Sets a session\'s tag (null removes it); answers the session info.',
      input: TagSessionArgs,
      run: async (args) => {
        agent.configured();
        return ok(agent.withRunning(await store.update(args.session_id, () => ({ tag: args.tag }))), { session_id: args.session_id });
      },
    }),
    defineJob({
      name: 'fork_agent_session',
      output: AgentSessionView,
      description: 'Copies a session (up to and including up_to_message_id when given) into a new one; answers the new session\'s info.',
      input: ForkSessionArgs,
      run: async (args) => {
        agent.configured();
        const info = await store.fork(args.session_id, args.up_to_message_id, args.title);
        return ok(agent.withRunning(info), { session_id: info.session_id, forked_from: args.session_id });
      },
    }),
    defineJob({
      name: 'delete_agent_session',
      output: Type.Boolean(),
      description: 'Deletes a session and its messages; answers true. A session with a running turn is refused (cancel_agent_turn first).',
      input: SessionArgs,
      run: async (args) => {
        agent.configured();
        await agent.delete(args.session_id);
        return ok(true, { session_id: args.session_id });
      },
    }),
    defineJob({
      name: 'cancel_agent_turn',
      output: Type.Boolean(),
      description: 'Stops the running turn of a session: true when this call cancelled it (what was said is kept), false when the session is idle; KeyError for an unknown session.',
      input: SessionArgs,
      run: async (args) => {
        agent.configured();
        return ok(await agent.cancel(args.session_id), { session_id: args.session_id });
      },
    }),
  ];
}
