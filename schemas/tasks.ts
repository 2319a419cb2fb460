import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import { LogEvent } from './events.js';

/**
 * Wire shapes of the Task resources (spec: "Task identity" to "Task context"). The task runner
 * only imports these as types, so its import graph stays free of TypeBox.
 */

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { default: null });

export const TaskState = { queued: 'queued', running: 'running', succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled' } as const;
export type TaskState = (typeof TaskState)[keyof typeof TaskState];

export const TaskStepStatus = Type.Object({
  name: Type.String({ minLength: 1 }),
  started_at: Timestamp,
  finished_at: Timestamp,
  percentage: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], { default: null }),
});
export type TaskStepStatus = Static<typeof TaskStepStatus>;

export const TaskStatus = Type.Object({
  task_id: Type.String(),
  run_id: Type.String({ minLength: 1 }),
  task_type: Type.String(),
  task_name: Type.String({ default: '' }),
  config: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  state: Type.Union(Object.values(TaskState).map((s) => Type.Literal(s)), { default: 'queued' }),
  pid: Type.Union([Type.Integer(), Type.Null()], { default: null }),
  created_at: Timestamp,
  started_at: Timestamp,
  finished_at: Timestamp,
  steps: Type.Array(TaskStepStatus, { default: [] }),
  result: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  error: Type.String({ default: '' }),
  exit_code: Type.Integer({ minimum: 0, maximum: 255, default: 0 }),
  log_path: Type.String({ default: '' }),
});
export type TaskStatus = Static<typeof TaskStatus>;

export const TaskStateName = Type.Union(Object.values(TaskState).map((s) => Type.Literal(s)));

/** Arguments of `query_task_statuses` (beyond the spec: the console and dashboards poll it). */
export const QueryTaskStatusesInput = Type.Object(
  {
    state: Type.Optional(Type.Array(TaskStateName, { minItems: 1, description: 'Only Tasks in one of these states' })),
    task_type: Type.Optional(Type.String({ minLength: 1, description: 'Only Tasks of this task_type' })),
    registration: Type.Optional(Type.String({ minLength: 1, description: 'Only Tasks of this registration name' })),
    created_after: Type.Optional(Type.String({ format: 'date-time', description: 'Only Tasks created after this instant' })),
    created_before: Type.Optional(Type.String({ format: 'date-time', description: 'Only Tasks created before this instant' })),
    id_contains: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only Task IDs containing this text (case-insensitive)' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Most items in one answer' }),
    cursor: Type.Optional(Type.String({ minLength: 1, description: 'next_cursor of the previous page' })),
    changed_since: Type.Optional(
      Type.String({ minLength: 1, description: 'version of an earlier answer: only Tasks changed since (matching the filters), plus deleted IDs' }),
    ),
    fields: Type.Optional(
      Type.Array(Type.KeyOf(TaskStatus), {
        minItems: 1,
        uniqueItems: true,
        description: 'Only these TaskStatus fields in each item (task_id always comes); without it, whole statuses',
      }),
    ),
  },
  { additionalProperties: false },
);
export type QueryTaskStatusesInput = Static<typeof QueryTaskStatusesInput>;

/** Answer of `query_task_statuses`. */
export const TaskStatusPage = Type.Object({
  items: Type.Array(TaskStatus, { description: 'Matching statuses in list_task_statuses order (with `fields`: task_id and those fields only)' }),
  total: Type.Union([Type.Integer(), Type.Null()], { description: 'Matching Tasks in all pages (null for a changed_since answer)' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'cursor of the next page; null on the last one' }),
  version: Type.String({ description: 'pass as changed_since to receive only what changes after this answer' }),
  deleted: Type.Array(Type.String(), { description: 'with changed_since: IDs deleted since, or no longer matching the filters' }),
  reset: Type.Boolean({ description: 'true when changed_since was not a version of this service run: the answer is a first page' }),
});
export type TaskStatusPage = Static<typeof TaskStatusPage>;

export const TaskMetadata = Type.Object({
  task_id: Type.String(),
  reg_name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  task_type: Type.String(),
  input_params: Type.Record(Type.String(), Type.Unknown()),
  output_params: Type.Record(Type.String(), Type.Unknown()),
});
export type TaskMetadata = Static<typeof TaskMetadata>;

export const ArtifactRecord = Type.Object({
  path: Type.String({ minLength: 1 }),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
});
export type ArtifactRecord = Static<typeof ArtifactRecord>;

/** The fields the runtime adds to every Task's input (spec: "Base input parameters of every Task"). */
export const BaseTaskInput = Type.Object({
  task_name: Type.Union([Type.String({ pattern: '^([A-Za-z0-9-]{1,32})?$' }), Type.Null()], {
    default: null,
    description: 'Instance name: 1-32 letters, digits or hyphens; empty or omitted generates a unique name',
  }),
  source_tasks: Type.String({ default: '', description: 'Task IDs this Task derives from, separated by ASCII commas' }),
});
export type BaseTaskInput = Static<typeof BaseTaskInput>;

/** The field the runtime adds to every Task's output: its artifacts by logical name. */
export const BaseTaskOutput = Type.Object({
  // Unsafe only to give the static type: the schema stays `additionalProperties`, as published before.
  artifacts: Type.Unsafe<Record<string, ArtifactRecord>>(Type.Object({}, { additionalProperties: ArtifactRecord, default: {}, description: 'Artifacts by logical name' })),
});
export type BaseTaskOutput = Static<typeof BaseTaskOutput>;

/**
 * What a run needs (a definition's `resources`, overridden by config `tasks.<registration>.resources`).
 * Locally a run starts only when its CPUs and GPUs are free; on Slurm these become sbatch options.
 */
export const TaskResources = Type.Object(
  {
    cpus: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, description: 'CPU cores the run holds' })),
    gpus: Type.Optional(Type.Integer({ minimum: 0, maximum: 64, description: 'GPUs the run holds, leased by index' })),
    memory_mb: Type.Optional(Type.Integer({ minimum: 1, description: 'Memory in MiB (Slurm --mem)' })),
    time_limit_s: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds before the run fails with a time-limit error' })),
  },
  { additionalProperties: false },
);
export type TaskResources = Static<typeof TaskResources>;

/**
 * Why a failed run may be tried again: the machine's failures, never the code's unless asked.
 * `lost`: the runner died without a terminal status (killed, the machine or service went down);
 * `node_fail`: the engine lost the node (Slurm NODE_FAIL, BOOT_FAIL, PREEMPTED);
 * `timeout`: the run passed `resources.time_limit_s`.
 */
export const RetryCause = Type.Union([Type.Literal('lost'), Type.Literal('node_fail'), Type.Literal('timeout')]);
export type RetryCause = Static<typeof RetryCause>;

/**
 * A definition's retry policy (config `tasks.<registration>.retries` replaces it whole). A retry
 * keeps the task_id and gives the next attempt a new run_id; `exit_codes` retries a run that
 * ended with one of those codes (an exception exits 1: it is retried only when 1 is listed).
 */
export const TaskRetries = Type.Object(
  {
    max: Type.Integer({ minimum: 0, maximum: 100, description: 'Attempts after the first' }),
    on: Type.Array(RetryCause, { uniqueItems: true, default: ['lost', 'node_fail'], description: 'Failures of the machine that are retried' }),
    exit_codes: Type.Array(Type.Integer({ minimum: 1, maximum: 255 }), { uniqueItems: true, default: [], description: 'Exit codes of the run that are retried' }),
    backoff_s: Type.Number({ minimum: 0, maximum: 3600, default: 0, description: 'Seconds before the first retry; doubled for each further one' }),
  },
  { additionalProperties: false },
);
export type TaskRetries = Static<typeof TaskRetries>;

/** Answer of `submit`: `task` is the registration name (there is no `task_name` field). */
export const TaskHandle = Type.Object({
  task_id: Type.String(),
  run_id: Type.String({ minLength: 1 }),
  task: Type.String({ description: 'Registration name' }),
});
export type TaskHandle = Static<typeof TaskHandle>;

/** A definition as the catalog shows it (spec: TaskDefinition). */
export const TaskDefinition = Type.Object({
  name: Type.String({ description: 'Registration name' }),
  source: Type.Union([Type.Literal('native'), Type.Literal('plugin')]),
  plugin: Type.Union([Type.String(), Type.Null()]),
  task_type: Type.String(),
  description: Type.String(),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
  output_schema: Type.Record(Type.String(), Type.Unknown()),
  /** What a run of it asks for (definition, then config); `{}` asks for nothing in particular. */
  resources: TaskResources,
  /** How failed runs are tried again (definition, then config); absent: never. */
  retries: Type.Optional(TaskRetries),
  /** Whether a submit with the same key answers from a succeeded Task (definition, then config). */
  cache: Type.Optional(Type.Boolean()),
});
export type TaskDefinition = Static<typeof TaskDefinition>;

/** Answer of `read_task_log`: the `log` event's window fields, without `kind` and `channel`. */
export const TaskLogChunk = Type.Omit(LogEvent, ['kind', 'channel']);
export type TaskLogChunk = Static<typeof TaskLogChunk>;

/** A node of the lineage graph (spec: Task graph). */
export const GraphNode = Type.Object({
  task_id: Type.String(),
  /** The task type (directory type), known even for a missing node from its ID. */
  kind: Type.String({ description: 'Task type' }),
  /** Registration name, as TaskStatus.task_name holds it. */
  task_name: Type.String(),
  created_at: Type.Union([Type.String(), Type.Null()]),
  parent_ids: Type.Array(Type.String()),
  state: Type.Union([TaskStateName, Type.Null()]),
  missing: Type.Boolean(),
  /** Queued or running: its outputs do not exist yet. */
  provisional: Type.Boolean({ description: 'Queued or running: its outputs do not exist yet' }),
});
export type GraphNode = Static<typeof GraphNode>;

/** A parent → child edge (source = the upstream Task). */
export const GraphEdge = Type.Object({ source: Type.String(), target: Type.String() });
export type GraphEdge = Static<typeof GraphEdge>;

/** Answer of get_task_graph. */
export const TaskGraph = Type.Object({
  root_id: Type.String(),
  selected_id: Type.String(),
  nodes: Type.Array(GraphNode),
  edges: Type.Array(GraphEdge),
});
export type TaskGraph = Static<typeof TaskGraph>;

const TaskIds = Type.Array(Type.String());

/** Relations of get_task_context, each an array of Task IDs. */
export const Relations = Type.Object({
  direct_upstream: TaskIds,
  ancestors: TaskIds,
  direct_downstream: TaskIds,
  missing: TaskIds,
  provisional: TaskIds,
});
export type Relations = Static<typeof Relations>;

/** Answer of get_task_context (spec: Task context; not the runtime's TaskContext of a run). */
export const TaskContextAnswer = Type.Object({
  task_id: Type.String(),
  status: TaskStatus,
  metadata_exists: Type.Boolean(),
  metadata_path: Type.String({ description: 'Workspace-relative: <type>/<task_id>/metadata.json' }),
  log_path: Type.Union([Type.String(), Type.Null()]),
  graph: TaskGraph,
  relations: Relations,
});
export type TaskContextAnswer = Static<typeof TaskContextAnswer>;
