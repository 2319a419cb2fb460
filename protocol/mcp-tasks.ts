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
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { plainAnswer, type JobResponse } from '../schemas/job-response.js';
import { createJobContext } from '../core/job.js';
import type { JobRegistry } from '../core/registry.js';
import { ShellTasks } from './mcp-shell-tasks.js';

/** Tools that accept task-augmented calls: their MCP task is a run of a service Task. */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['submit', 'wait_task', 'stream_task', 'shell']);
/** The Jobs an MCP task is served through; without all of them public, no tasks capability. */
const NEEDED = ['status', 'wait_task', 'cancel', 'list_task_statuses'];
/** How often a client should poll `tasks/get` (ms); tasks/result blocks until the end anyway. */
const POLL_MS = 1000;
const PAGE = 100;
const ID_PREFIX = 'taskyard-run:';

/** The fields of a TaskStatus an MCP task is made of. */
interface RunStatus {
  task_id: string;
  run_id: string;
  state: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: string;
}

interface RunRef {
  task_id: string;
  run_id: string;
}

/** The MCP task ID of a run: opaque, and decodable after a restart (nothing is kept in memory). */
export function mcpTaskId(ref: RunRef): string {
  return ID_PREFIX + Buffer.from(JSON.stringify([ref.task_id, ref.run_id])).toString('base64url');
}

function runOf(taskId: string): RunRef {
  try {
    if (taskId.startsWith(ID_PREFIX)) {
      const [task_id, run_id] = JSON.parse(Buffer.from(taskId.slice(ID_PREFIX.length), 'base64url').toString('utf8')) as unknown[];
      if (typeof task_id === 'string' && typeof run_id === 'string') return { task_id, run_id };
    }
  } catch {
    // Not one of ours: answered below like an unknown task.
  }
  throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
}

const MCP_STATUS: Readonly<Record<string, Task['status']>> = { succeeded: 'completed', failed: 'failed', cancelled: 'cancelled' };

function toMcpTask(status: RunStatus): Task {
  const detail = status.error ? `${status.state}: ${status.error}` : status.state;
  return {
    taskId: mcpTaskId(status),
    status: MCP_STATUS[status.state] ?? 'working',
    statusMessage: `Task ${status.task_id}: ${detail}`,
    ttl: null,
    createdAt: status.created_at,
    lastUpdatedAt: status.finished_at ?? status.started_at ?? status.created_at,
    pollInterval: POLL_MS,
  };
}

/** The MCP form of a JobResponse (text block, structured content, isError), its answer made a plain value. */
export async function toolResult(response: JobResponse): Promise<CallToolResult> {
  const plain = await plainAnswer(response);
  return { content: [{ type: 'text', text: JSON.stringify(plain) }], structuredContent: plain as unknown as Record<string, unknown>, isError: !plain.success };
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

  constructor(
    private readonly registry: JobRegistry,
    private readonly shutdown: AbortSignal,
  ) {
    this.#shell = new ShellTasks(registry, shutdown);
  }

  /** Whether the service can serve MCP tasks (the Jobs behind them are public). */
  get available(): boolean {
    return NEEDED.every((name) => this.registry.get(name) !== undefined);
  }

  async #call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<JobResponse> {
    const entry = this.registry.get(name);
    if (!entry) throw new McpError(ErrorCode.MethodNotFound, `${name} is not available on this service`);
    const ctx = createJobContext(() => (signal ? [signal, this.shutdown] : [this.shutdown]), false);
    return await plainAnswer((await this.registry.execute(entry, this.registry.prepare(entry, args), ctx, 'mcp')) ?? { answer: 'no result', success: false, metadata: {} });
  }

  async #status(taskId: string): Promise<RunStatus> {
    const response = await this.#call('status', { task_id: taskId });
    if (!response.success) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${String(response.answer)}`);
    return response.answer as RunStatus;
  }

  /** The current state of a run; a run replaced by a newer one is reported failed. */
  async #run(ref: RunRef): Promise<Task> {
    const status = await this.#status(ref.task_id);
    if (status.run_id === ref.run_id) return toMcpTask(status);
    return { ...toMcpTask({ ...status, ...ref }), status: 'failed', statusMessage: `Task ${ref.task_id} was replaced by a newer run (${status.run_id})` };
  }

  /** Starts the MCP task of a task-augmented call of one of TASK_TOOLS (arguments validated). */
  async create(tool: string, args: Record<string, unknown>, callerGone: AbortSignal, ttl?: number): Promise<Task> {
    if (tool === 'shell') return this.#shell.start(args, ttl);
    if (tool === 'submit') {
      const response = await this.#call('submit', args, callerGone);
      if (!response.success) throw new McpError(ErrorCode.InvalidParams, String(response.answer));
      return this.#run(response.answer as RunRef);
    }
    const status = await this.#status(String(args['task_id']));
    const runId = tool === 'wait_task' ? String(args['run_id']) : status.run_id;
    if (status.run_id !== runId) throw new McpError(ErrorCode.InvalidParams, `run_id ${runId} is not the current execution of task ${status.task_id}`);
    return toMcpTask(status);
  }

  /** Adds tasks/get, tasks/result, tasks/list and tasks/cancel to a server declaring the capability. */
  install(server: Server, caller: () => AbortSignal): void {
    const shell = this.#shell;
    server.setRequestHandler(GetTaskRequestSchema, async ({ params: { taskId } }) => (ShellTasks.owns(taskId) ? shell.get(taskId) : this.#run(runOf(taskId))) as never);
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
      const { taskId } = request.params;
      const response = ShellTasks.owns(taskId) ? await shell.result(taskId) : await this.#call('wait_task', { ...runOf(taskId) }, AbortSignal.any([caller(), extra.signal]));
      return { ...(await toolResult(response)), _meta: { [RELATED_TASK_META_KEY]: { taskId: request.params.taskId } } } as never;
    });
    server.setRequestHandler(ListTasksRequestSchema, async (request) => {
      const start = Number(request.params?.cursor ?? 0);
      if (!Number.isInteger(start) || start < 0) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${request.params?.cursor}`);
      // Running shell commands first, then the Task records, newest first.
      const commands = shell.list();
      const runs = (await this.#call('list_task_statuses', {})).answer as RunStatus[];
      const end = start + PAGE;
      const tasks = [...commands.slice(start, end), ...runs.slice(Math.max(0, start - commands.length), Math.max(0, end - commands.length)).map(toMcpTask)];
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
