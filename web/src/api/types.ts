/**
 * Types of what the console reads, all from the service's own schemas (one source).
 */
export type { ProgressEvent, LogEvent, ArtifactEvent, ResultEvent, StreamEvent } from '../../../schemas/events.js';
export type { WorkspaceEntry, WorkspaceListing, PreviewAnswer as Preview } from '../../../schemas/workspace.js';
export type { MachineHealth, MachineInfo, GpuDevice } from '../../../schemas/machine.js';
export type { ArtifactRecord, TaskHandle, TaskLogChunk, TaskState, TaskStatus, TaskStatusPage, TaskStepStatus as TaskStep } from '../../../schemas/tasks.js';
import type { JobDescriptor as WireJobDescriptor } from '../../../schemas/job-response.js';
import type { Relations, TaskDefinition as WireTaskDefinition, TaskGraph, TaskStatus } from '../../../schemas/tasks.js';

export type { GraphNode, TaskGraph } from '../../../schemas/tasks.js';

export type { JsonSchema } from '../../../schemas/json-schema.js';
import type { JsonSchema } from '../../../schemas/json-schema.js';

export interface JobResponse<T = unknown> {
  answer: T;
  success: boolean;
  metadata: Record<string, unknown>;
}

/** Schemas as the console reads them (the wire types say only "an object"). */
export type JobDescriptor = Omit<WireJobDescriptor, 'input_schema' | 'output_schema'> & { input_schema: JsonSchema; output_schema: JsonSchema };
export type TaskDefinition = Omit<WireTaskDefinition, 'input_schema' | 'output_schema'> & { input_schema: JsonSchema; output_schema: JsonSchema };

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export interface TaskContext {
  task_id: string;
  status: TaskStatus;
  metadata_exists: boolean;
  metadata_path: string;
  log_path: string | null;
  graph: TaskGraph;
  relations: Relations;
}
