import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ProgressToken,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { plainAnswer, type JobResponse } from '../schemas/job-response.js';
import type { JobReply } from '../schemas/job-answers.js';
import { TaskStatus, type TaskHandle } from '../schemas/tasks.js';
import type { TSchema } from '@sinclair/typebox';
import { createJobContext, type JobContext } from '../core/job.js';
import { stepText } from './mcp-progress.js';
import { TaskProgress } from './mcp-task-progress.js';
import type { JobRegistry } from '../core/registry.js';
import type { CallerTag } from '../core/caller.js';
import { ShellTasks } from './mcp-shell-tasks.js';
import { baseUrlOf, resourceLinks } from './mcp-resource-links.js';

/** Tools that accept task-augmented calls: their MCP task is a run of a service Task. */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['submit', 'wait_task', 'stream_task', 'shell']);
/**
 * What tasks/result answers for a task-augmented call of a tool, where that differs from the
 * tool's own answer: a submit's MCP task is its run, so it ends with the run's terminal TaskStatus
 * (what `wait_task` answers), not the TaskHandle a plain submit answers.
 */
export const TASK_RESULT_ANSWERS: Readonly<Record<string, TSchema>> = { submit: TaskStatus };
/** The Jobs an MCP task is served through; without all of them public, no tasks capability. */
const NEEDED = ['status', 'wait_task', 'cancel', 'list_task_statuses'];
/** How often a client should poll `tasks/get` (ms); tasks/result blocks until the end anyway. */
const POLL_MS = 1000;
const PAGE = 100;
const ID_PREFIX = 'taskyard-run:';

/** The fields of a TaskStatus an MCP task is made of. */
type RunStatus = Pick<TaskStatus, 'task_id' | 'run_id' | 'state' | 'created_at' | 'started_at' | 'finished_at' | 'error'> & {
  steps?: ReadonlyArray<{ name: string; percentage: number | null }>;
};

/**
 * An MCP task must name when it was created. A submit always records it, but a record another
 * tool wrote may not (`created_at` is nullable): its first known time stands in, else the epoch.
 */
function createdAtOf(status: RunStatus): string {
  return status.created_at ?? status.started_at ?? status.finished_at ?? new Date(0).toISOString();
}

type RunRef = Pick<TaskHandle, 'task_id' | 'run_id'>;

/** A run an MCP task stands for, and the progress token of the call that made it, if any. */
interface TaskRef extends RunRef {
  token?: ProgressToken | undefined;
}

/**
 * The MCP task ID of a run: opaque, and decodable after a restart (nothing is kept in memory).
 * It carries the progress token of the call that made it: that token stays the task's for its
 * whole life (MCP 2025-11-25, progress), and `tasks/result` finds it here.
 */
export function mcpTaskId(ref: TaskRef): string {
  const fields = ref.token === undefined ? [ref.task_id, ref.run_id] : [ref.task_id, ref.run_id, ref.token];
  return ID_PREFIX + Buffer.from(JSON.stringify(fields)).toString('base64url');
}

const isToken = (v: unknown): v is ProgressToken => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

function runOf(taskId: string): TaskRef {
  try {
    if (taskId.startsWith(ID_PREFIX)) {
      const [task_id, run_id, token] = JSON.parse(Buffer.from(taskId.slice(ID_PREFIX.length), 'base64url').toString('utf8')) as unknown[];
      if (typeof task_id === 'string' && typeof run_id === 'string') return { task_id, run_id, ...(isToken(token) ? { token } : {}) };
    }
  } catch {
    // Not one of ours: answered below like an unknown task.
  }
  throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
}

const MCP_STATUS: Readonly<Record<string, Task['status']>> = { succeeded: 'completed', failed: 'failed', cancelled: 'cancelled' };

/** The MCP task of a run's status, under the ID it was asked by (which may carry a progress token). */
function toMcpTask(status: RunStatus, taskId = mcpTaskId(status)): Task {
  const mcpStatus = MCP_STATUS[status.state] ?? 'working';
  // A client that only polls tasks/get (no stream to carry progress) still sees the step.
  const step = mcpStatus === 'working' ? status.steps?.at(-1) : undefined;
  const detail = status.error ? `${status.state}: ${status.error}` : step ? `${status.state} · ${stepText(step.name, step.percentage)}` : status.state;
  return {
    taskId,
    status: mcpStatus,
    statusMessage: `Task ${status.task_id}: ${detail}`,
    ttl: null,
    createdAt: createdAtOf(status),
    lastUpdatedAt: status.finished_at ?? status.started_at ?? createdAtOf(status),
    pollInterval: POLL_MS,
  };
}

/** The MCP form of a JobResponse (text block, structured content, isError), its answer made a plain value. */
export async function toolResult(response: JobResponse, tool?: string, base?: string): Promise<CallToolResult> {
  const plain = await plainAnswer(response);
  const links = tool === undefined ? [] : resourceLinks(tool, plain.answer, base);
  return { content: [{ type: 'text', text: JSON.stringify(plain) }, ...links], structuredContent: plain, isError: !plain.success };
}

/**
 * MCP Tasks (protocol 2025-11-25) over the service's own Task records: an MCP task is one run of
 * a Task, its ID encodes (task_id, run_id), and every request is answered through the public
 * Jobs (`status`, `wait_task`, `cancel`, `list_task_statuses`), so a handle survives a restart
 * and `tasks/cancel` cancels the run itself. `shell` commands are MCP tasks of their own
 * (ShellTasks), held in memory like the commands themselves.
 */
export class McpTasks {
  readonly #shell: ShellTasks;
  /** Shared by every pooled server: which wait of a task is the newest is known across them. */
  #progress: TaskProgress | undefined;

  constructor(
    private readonly registry: JobRegistry,
    private readonly shutdown: AbortSignal,
  ) {
    this.#shell = new ShellTasks(registry, shutdown);
  }

  /** Whether MCP tasks can be served to a caller of `scope` (the Jobs behind them are public and in its scope). */
  availableTo(scope: JobRegistry): boolean {
    return NEEDED.every((name) => scope.get(name) !== undefined);
  }

  /** Calls a public Job; with `emit`, it runs as for an event stream and its events go there. */
  async #call<N extends string>(name: N, args: Record<string, unknown>, signal?: AbortSignal, emit?: JobContext['emit'], caller?: CallerTag): Promise<JobReply<N>> {
    const entry = this.registry.get(name);
    if (!entry) throw new McpError(ErrorCode.MethodNotFound, `${name} is not available on this service`);
    const ctx = createJobContext(() => (signal ? [signal, this.shutdown] : [this.shutdown]), emit !== undefined, emit, caller);
    const response = await plainAnswer((await this.registry.execute(entry, this.registry.prepare(entry, args), ctx, 'mcp')) ?? { answer: 'no result', success: false, metadata: {} });
    // The built-in Job answers what it declares (JOB_ANSWERS); the one place that is taken as its type.
    return response as JobReply<N>;
  }

  async #status(taskId: string): Promise<RunStatus> {
    const response = await this.#call('status', { task_id: taskId });
    if (!response.success) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${String(response.answer)}`);
    return response.answer;
  }

  /** The current state of a run; a run replaced by a newer one is reported failed. */
  async #run(ref: TaskRef): Promise<Task> {
    const status = await this.#status(ref.task_id);
    const taskId = mcpTaskId(ref);
    if (status.run_id === ref.run_id) return toMcpTask(status, taskId);
    return { ...toMcpTask({ ...status, ...ref }, taskId), status: 'failed', statusMessage: `Task ${ref.task_id} was replaced by a newer run (${status.run_id})` };
  }

  /**
   * Starts the MCP task of a task-augmented call of one of TASK_TOOLS (arguments validated);
   * `token` is the call's progress token, which the task keeps.
   */
  async create(tool: string, args: Record<string, unknown>, callerGone: AbortSignal, ttl?: number, token?: ProgressToken, caller?: CallerTag): Promise<Task> {
    // The commands and submits of a task-augmented call are the caller's (audited, submitter kept).
    if (tool === 'shell') return this.#shell.start(args, ttl, token, caller);
    if (tool === 'submit') {
      const response = await this.#call('submit', args, callerGone, undefined, caller);
      if (!response.success) throw new McpError(ErrorCode.InvalidParams, String(response.answer));
      return this.#run({ ...response.answer, token });
    }
    const status = await this.#status(String(args['task_id']));
    const runId = tool === 'wait_task' ? String(args['run_id']) : status.run_id;
    if (status.run_id !== runId) throw new McpError(ErrorCode.InvalidParams, `run_id ${runId} is not the current execution of task ${status.task_id}`);
    return toMcpTask(status, mcpTaskId({ ...status, token }));
  }

  /** The run's terminal TaskStatus, through `wait_task`. */
  #waitRun({ task_id, run_id }: RunRef, signal: AbortSignal, emit?: JobContext['emit']): Promise<JobResponse> {
    return this.#call('wait_task', { task_id, run_id }, signal, emit);
  }

  /** Adds tasks/get, tasks/result, tasks/list and tasks/cancel to a server declaring the capability. */
  install(server: Server, caller: () => AbortSignal, progressIntervalMs: number): void {
    const shell = this.#shell;
    const progress = (this.#progress ??= new TaskProgress(progressIntervalMs));
    server.setRequestHandler(GetTaskRequestSchema, async ({ params: { taskId } }) => (ShellTasks.owns(taskId) ? shell.get(taskId) : this.#run(runOf(taskId))) as never);
    // tasks/result waits for the end; meanwhile the task's progress goes on its stream (the one
    // place a stateless server has to send it), and stops before the result.
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
      const { taskId } = request.params;
      const run = ShellTasks.owns(taskId) ? undefined : runOf(taskId);
      const wait = progress.open(taskId, run ? `Task ${run.task_id}` : 'shell', run ? run.token : shell.token(taskId), extra._meta?.progressToken, extra.sendNotification);
      try {
        const response = run ? await this.#waitRun(run, AbortSignal.any([caller(), extra.signal]), wait.emit) : await shell.result(taskId, wait.emit);
        const result = await toolResult(response, run ? 'wait_task' : 'shell', baseUrlOf(extra.requestInfo?.headers as Record<string, string> | undefined));
        return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } } as never;
      } finally {
        wait.close();
      }
    });
    server.setRequestHandler(ListTasksRequestSchema, async (request) => {
      const start = Number(request.params?.cursor ?? 0);
      if (!Number.isInteger(start) || start < 0) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${request.params?.cursor}`);
      // Running shell commands first, then the Task records, newest first.
      const commands = shell.list();
      const listed = await this.#call('list_task_statuses', {});
      if (!listed.success) throw new McpError(ErrorCode.InternalError, `Tasks could not be listed: ${String(listed.answer)}`);
      const runs = listed.answer;
      const end = start + PAGE;
      const tasks = [...commands.slice(start, end), ...runs.slice(Math.max(0, start - commands.length), Math.max(0, end - commands.length)).map((status) => toMcpTask(status))];
      return { tasks, ...(end < commands.length + runs.length ? { nextCursor: String(end) } : {}) } as never;
    });
    server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
      if (ShellTasks.owns(request.params.taskId)) return (await shell.cancel(request.params.taskId)) as never;
      const ref = runOf(request.params.taskId);
      const before = await this.#run(ref);
      if (before.status !== 'working') throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${before.status}`);
      await this.#call('cancel', { task_id: ref.task_id });
      return (await this.#run(ref)) as never;
    });
  }
}
