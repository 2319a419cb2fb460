import type { Static, TSchema } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';
import type { JobResponse } from './job-response.js';
import { AgentSessionPage, AgentSessionView } from './agent.js';
import { MachineHealth, MachineInfo, ShellOutput } from './machine.js';
import { MachineHistory } from './machine-history.js';
import { PluginChange, PluginInfo, SyncResult } from './plugins.js';
import { TaskMetricsChunk } from './task-metrics.js';
import { TaskContextAnswer, TaskDefinition, TaskGraph, TaskHandle, TaskLogChunk, TaskStatus, TaskStatusPage } from './tasks.js';
import { DeletedEntry, MovedEntry, PreviewAnswer, WorkspaceListing } from './workspace.js';
import { TaskRuns } from './task-runs.js';
import { CsvRowCount } from './csv-rows.js';
import { TaskColumnValues } from './task-columns.js';
import { WebhookStatusAnswer } from './webhooks.js';

/**
 * The answer schema of every built-in Job, by Job name: the same schemas the Jobs declare as
 * their `output` (test/protocol/job-answers.test.ts checks this map against the served OpenAPI
 * document, both ways). A client reads its answer types from here instead of casting.
 * Open values (a Task's `result`, a plugin Task's outputs) stay `unknown` inside these types.
 */
export const JOB_ANSWERS = {
  // Machine
  version: Type.String(),
  list_machines: Type.Array(MachineHealth),
  machine_status: MachineInfo,
  read_machine_history: MachineHistory,
  shell: ShellOutput,
  // Workspace
  list_entries: WorkspaceListing,
  list_task_runs: WorkspaceListing,
  preview_file: PreviewAnswer,
  delete_entries: Type.Array(DeletedEntry),
  move_entries: Type.Array(MovedEntry),
  count_csv_rows: CsvRowCount,
  // Tasks
  list_installed_task_definitions: Type.Array(TaskDefinition),
  get_task_definition: TaskDefinition,
  submit: TaskHandle,
  wait_task: TaskStatus,
  await_task: TaskStatus,
  stream_task: TaskStatus,
  list_task_ids: Type.Array(Type.String()),
  list_task_statuses: Type.Array(TaskStatus),
  query_task_statuses: TaskStatusPage,
  status: TaskStatus,
  read_task_log: TaskLogChunk,
  read_task_metrics: TaskMetricsChunk,
  read_task_columns: TaskColumnValues,
  get_task_runs: TaskRuns,
  get_task_graph: TaskGraph,
  get_task_context: TaskContextAnswer,
  cancel: Type.Boolean(),
  delete_tasks: Type.Array(Type.String()),
  // Plugins and snapshots
  install_plugin: PluginChange,
  list_plugins: Type.Array(PluginInfo),
  uninstall_plugin: PluginChange,
  sync_tasks: SyncResult,
  // Webhooks
  webhook_status: WebhookStatusAnswer,
  // Agent
  agent_chat: Type.String({ description: 'The final text of the turn' }),
  list_agent_sessions: Type.Array(AgentSessionView),
  get_agent_session: AgentSessionPage,
  rename_agent_session: AgentSessionView,
  tag_agent_session: AgentSessionView,
  fork_agent_session: AgentSessionView,
  delete_agent_session: Type.Boolean(),
  cancel_agent_turn: Type.Boolean(),
} as const satisfies Record<string, TSchema>;

/** The answer type of each Job in a map of answer schemas. */
export type AnswersOf<M extends Record<string, TSchema>> = { [N in keyof M]: Static<M[N]> };

/** The answer of each built-in Job, by name. */
export type JobAnswers = AnswersOf<typeof JOB_ANSWERS>;
export type JobName = keyof JobAnswers;

/** The answer type of Job `N` in map `M`; `unknown` for a Job the map does not name. */
export type AnswerIn<M, N extends string> = N extends keyof M ? M[N] : unknown;

/**
 * A JobResponse of Job `N` as a client reads it: on success the Job's answer (`unknown` for a Job
 * the map does not name); on a business failure whatever the Job answered then (most Jobs the
 * error text `<Type>: <message>`, `shell` its ShellOutput), to be read after `success`.
 */
export type JobReply<N extends string> = Omit<JobResponse, 'success' | 'answer'> & ({ success: true; answer: AnswerIn<JobAnswers, N> } | { success: false; answer: unknown });
