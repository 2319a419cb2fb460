import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { AgentBlockPatch } from './events.js';

/** A session or message id as the service makes them: also a safe directory name. */
export const SessionId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' });

/** `info.json` of one session, and what the session Jobs answer. */
export const AgentSessionInfo = Type.Object({
  session_id: Type.String(),
  title: Type.String(),
  tag: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  message_count: Type.Integer({ minimum: 0 }),
  /** The session this one was forked from, if any. */
  forked_from: Type.Union([Type.String(), Type.Null()]),
});
export type AgentSessionInfo = Static<typeof AgentSessionInfo>;

/** A session as the session Jobs answer it: its info, and whether a turn is running now. */
export const AgentSessionView = Type.Object({ ...AgentSessionInfo.properties, running: Type.Boolean() });
export type AgentSessionView = Static<typeof AgentSessionView>;

/** How a turn ended, as recorded at its end. */
export const TurnStatus = Type.Union([Type.Literal('completed'), Type.Literal('cancelled'), Type.Literal('failed')]);
export type TurnStatus = Static<typeof TurnStatus>;

export const TokenUsage = Type.Object({
  input_tokens: Type.Union([Type.Integer(), Type.Null()]),
  output_tokens: Type.Union([Type.Integer(), Type.Null()]),
});
export type TokenUsage = Static<typeof TokenUsage>;

/**
 * One line of `messages.jsonl`: a model message (`message`, in the client library's ModelMessage
 * shape, sent back to the model on the next turn) or the end of a turn (`turn`, never sent).
 */
export const SessionRecord = Type.Object({
  id: Type.String(),
  turn_id: Type.String(),
  created_at: Type.String(),
  message: Type.Optional(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]), content: Type.Unknown() })),
  turn: Type.Optional(Type.Object({ status: TurnStatus, usage: TokenUsage, error: Type.Union([Type.String(), Type.Null()]) })),
});
export type SessionRecord = Static<typeof SessionRecord>;

/** A presentation block in its final state, as `get_agent_session` answers to redraw a session. */
export const AgentBlock = Type.Object({
  block_id: Type.String(),
  block_type: AgentBlockPatch.properties.block_type,
  text: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown()),
});
export type AgentBlock = Static<typeof AgentBlock>;

/** Answer of get_agent_session: the session, a page of its messages and the blocks that redraw it. */
export const AgentSessionPage = Type.Object({
  ...AgentSessionView.properties,
  messages: Type.Array(
    Type.Object({
      id: Type.String(),
      turn_id: Type.String(),
      created_at: Type.String(),
      role: SessionRecord.properties.message.properties.role,
      content: Type.Unknown(),
    }),
  ),
  blocks: Type.Array(AgentBlock),
});
export type AgentSessionPage = Static<typeof AgentSessionPage>;

const Paging = (limit: number, max: number) => ({
  limit: Type.Integer({ minimum: 1, maximum: max, default: limit }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

export const AgentChatArgs = Type.Object(
  { message: Type.String({ minLength: 1 }), session_id: Type.Optional(SessionId) },
  { additionalProperties: false },
);
export const ListSessionsArgs = Type.Object(Paging(50, 200), { additionalProperties: false });
export const GetSessionArgs = Type.Object({ session_id: SessionId, ...Paging(200, 1000) }, { additionalProperties: false });
export const SessionArgs = Type.Object({ session_id: SessionId }, { additionalProperties: false });
export const RenameSessionArgs = Type.Object({ session_id: SessionId, title: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const TagSessionArgs = Type.Object({ session_id: SessionId, tag: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]) }, { additionalProperties: false });
export const ForkSessionArgs = Type.Object(
  { session_id: SessionId, up_to_message_id: Type.Optional(SessionId), title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
