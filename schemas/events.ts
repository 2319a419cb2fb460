import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { JobResponse } from './job-response.js';
import { TaskMetricsChunk } from './task-metrics.js';

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { default: null });
const Percentage = Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], { default: null });

export const ProgressEvent = Type.Object({
  kind: Type.Literal('progress'),
  name: Type.String({ minLength: 1 }),
  started_at: Timestamp,
  finished_at: Timestamp,
  percentage: Percentage,
});
export type ProgressEvent = Static<typeof ProgressEvent>;

export const LogEvent = Type.Object({
  kind: Type.Literal('log'),
  content: Type.String({ default: '' }),
  start_offset: Type.Integer({ default: 0 }),
  next_offset: Type.Integer({ default: 0 }),
  file_size: Type.Integer({ default: 0 }),
  has_more_before: Type.Boolean({ default: false }),
  has_more_after: Type.Boolean({ default: false }),
  reset: Type.Boolean({ default: false }),
  channel: Type.String({ default: 'task' }),
});
export type LogEvent = Static<typeof LogEvent>;

export const ArtifactEvent = Type.Object({
  kind: Type.Literal('artifact'),
  path: Type.String(),
  sha256: Type.String({ default: '' }),
  size: Type.Integer({ default: 0 }),
  media_type: Type.Union([Type.String(), Type.Null()], { default: null }),
  extra: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
});
export type ArtifactEvent = Static<typeof ArtifactEvent>;

export const AgentBlockPatch = Type.Object({
  operation: Type.Union([Type.Literal('start'), Type.Literal('append'), Type.Literal('replace'), Type.Literal('finish')]),
  block_id: Type.String(),
  block_type: Type.Union(['thinking', 'text', 'tool', 'system', 'error'].map((t) => Type.Literal(t))),
  delta: Type.String({ default: '' }),
  payload: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
});
export type AgentBlockPatch = Static<typeof AgentBlockPatch>;

export const AgentMessageEvent = Type.Object({
  kind: Type.Literal('agent_message'),
  session_id: Type.String({ minLength: 1 }),
  type_name: Type.String(),
  message: Type.Record(Type.String(), Type.Unknown()),
  sequence: Type.Integer({ minimum: 0 }),
  presentation: Type.Array(AgentBlockPatch, { default: [] }),
});
export type AgentMessageEvent = Static<typeof AgentMessageEvent>;

/** Events a Job may emit while it runs; `result` is added by the transport, never by the Job. */
/**
 * `read_task_metrics` over `/events` (beyond the spec): each window of points as the Task reports
 * them, while it runs; the `result` then carries the cursor to read on from.
 */
export const MetricsEvent = Type.Object({ kind: Type.Literal('metrics'), ...TaskMetricsChunk.properties });
export type MetricsEvent = Static<typeof MetricsEvent>;

export type JobEvent = ProgressEvent | LogEvent | ArtifactEvent | AgentMessageEvent | MetricsEvent;

/** The last event of every stream: the JobResponse fields plus `kind`. */
export const ResultEvent = Type.Object({ kind: Type.Literal('result'), ...JobResponse.properties });
export type ResultEvent = Static<typeof ResultEvent>;

export type StreamEvent = JobEvent | ResultEvent;
