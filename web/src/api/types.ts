/**
 * Wire types of the answers the console reads. Event types come from the service's own schemas
 * (one source); answers of Jobs are typed here as the spec describes them, loosely where the spec
 * leaves fields open, because the running service's schemas are authoritative.
 */
export type { ProgressEvent, LogEvent, ArtifactEvent, ResultEvent, StreamEvent } from '../../../schemas/events.js';
export type { WorkspaceEntry, WorkspaceListing, PreviewAnswer as Preview } from '../../../schemas/workspace.js';
export type { MachineHealth, MachineInfo, GpuDevice } from '../../../schemas/machine.js';

export type JsonSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
};

export interface JobResponse<T = unknown> {
  answer: T;
  success: boolean;
  metadata: Record<string, unknown>;
}

export interface JobDescriptor {
  name: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
}

export type TaskState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export interface TaskStep {
  name: string;
  started_at: string | null;
  finished_at: string | null;
  percentage: number | null;
}

export interface ArtifactRecord {
  path: string;
  size: number;
  sha256: string;
}

export interface TaskStatus {
  task_id: string;
  run_id: string;
  task_type: string;
  task_name: string;
  config: Record<string, unknown>;
  state: TaskState;
  pid: number | null;
  created_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  steps: TaskStep[];
  result: Record<string, unknown> & { artifacts?: Record<string, ArtifactRecord> };
  error: string;
  exit_code: number;
  log_path: string;
}

export interface TaskDefinition {
  name: string;
  source: 'native' | 'plugin';
  plugin: string | null;
  task_type: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
}

export interface TaskHandle {
  task_id: string;
  run_id: string;
  task: string;
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

export interface GraphNode {
  task_id: string;
  kind: string;
  task_name: string;
  created_at: string | null;
  parent_ids: string[];
  state: string | null;
  missing: boolean;
  provisional: boolean;
}

export interface TaskGraph {
  root_id: string;
  selected_id: string;
  nodes: GraphNode[];
  edges: unknown[];
}

export interface TaskContext {
  task_id: string;
  status: TaskStatus;
  metadata_exists: boolean;
  metadata_path: string;
  log_path: string | null;
  graph: TaskGraph;
  relations: Record<'direct_upstream' | 'ancestors' | 'direct_downstream' | 'missing' | 'provisional', string[]>;
}
