import { Type, type Static } from '@sinclair/typebox';

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
export type TaskStatus = Omit<Static<typeof TaskStatus>, 'state'> & { state: TaskState };

const TaskStateName = Type.Union(Object.values(TaskState).map((s) => Type.Literal(s)));

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
  created_at: Type.String(),
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

export interface TaskHandle {
  task_id: string;
  run_id: string;
  task: string;
}

/** A definition as the catalog shows it (spec: TaskDefinition). */
export interface TaskDefinition {
  name: string;
  source: 'native' | 'plugin';
  plugin: string | null;
  task_type: string;
  description: string;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  /** What a run of it asks for (definition, then config); `{}` asks for nothing in particular. */
  resources: TaskResources;
}

export interface TaskLogChunk {
  content: string;
  start_offset: number;
  next_offset: number;
  file_size: number;
  has_more_before: boolean;
  has_more_after: boolean;
  reset: boolean;
}

/** A node of the lineage graph (spec: Task graph). */
export interface GraphNode {
  task_id: string;
  /** The task type (directory type), known even for a missing node from its ID. */
  kind: string;
  /** Registration name, as TaskStatus.task_name holds it. */
  task_name: string;
  created_at: string | null;
  parent_ids: string[];
  state: string | null;
  missing: boolean;
  /** Queued or running: its outputs do not exist yet. */
  provisional: boolean;
}

/** A parent → child edge (source = the upstream Task). */
export interface GraphEdge {
  source: string;
  target: string;
}

/** Answer of get_task_graph. */
export interface TaskGraph {
  root_id: string;
  selected_id: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** Relations of get_task_context, each an array of Task IDs. */
export interface Relations {
  direct_upstream: string[];
  ancestors: string[];
  direct_downstream: string[];
  missing: string[];
  provisional: string[];
}
