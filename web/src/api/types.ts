/**
 * Types of what the console reads, all from the service's own schemas (one source).
 */
export type { ProgressEvent, LogEvent, ArtifactEvent, ResultEvent, StreamEvent } from '../../../schemas/events.js';
export type { FileCopy, MovedEntry, WorkspaceEntry, WorkspaceListing, PreviewAnswer as Preview } from '../../../schemas/workspace.js';
export type { MachineHealth, MachineInfo, GpuDevice } from '../../../schemas/machine.js';
export type { MachineHistory } from '../../../schemas/machine-history.js';
export type { WebhookEndpointStatus } from '../../../schemas/webhooks.js';
export type { ArtifactRecord, TaskHandle, TaskLogChunk, TaskState, TaskStatus, TaskStatusPage, TaskStepStatus as TaskStep } from '../../../schemas/tasks.js';
import type { JobDescriptor as WireJobDescriptor, JobResponseOf } from '../../../schemas/job-response.js';
import type { TaskDefinition as WireTaskDefinition } from '../../../schemas/tasks.js';
import type { WithJsonSchemas } from '../../../schemas/json-schema.js';

export type { GraphNode, TaskGraph } from '../../../schemas/tasks.js';

export type { JsonSchema } from '../../../schemas/json-schema.js';
export type { TaskContextAnswer as TaskContext } from '../../../schemas/tasks.js';

/** A JobResponse whose answer the console knows the type of. */
export type JobResponse<T = unknown> = JobResponseOf<T>;

/** Schemas as the console reads them (the wire types say only "an object"). */
export type JobDescriptor = WithJsonSchemas<WireJobDescriptor>;
export type TaskDefinition = WithJsonSchemas<WireTaskDefinition>;

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export type { MetricPoint, TaskMetricsChunk } from '../../../schemas/task-metrics.js';
export type { TaskRuns } from '../../../schemas/task-runs.js';
export type { CsvRowCount } from '../../../schemas/csv-rows.js';
export type { TaskColumnValues } from '../../../schemas/task-columns.js';
