import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError, type ProgressToken, type Task } from '@modelcontextprotocol/sdk/types.js';
import { plainAnswer, type JobResponse } from '../schemas/job-response.js';
import { createJobContext, type JobContext } from '../core/job.js';
import type { CallerTag } from '../core/caller.js';
import type { JobArgs, JobRegistry } from '../core/registry.js';

const ID_PREFIX = 'taskyard-shell:';
/** How long a finished command's result is kept when the client asked for no ttl (ms). */
const DEFAULT_TTL_MS = 3_600_000;
const POLL_MS = 1000;

interface ShellTask {
  task: Task;
  done: Promise<JobResponse>;
  stop: AbortController;
  /** The progress token of the call that started it: the task's for its whole life. */
  token: ProgressToken | undefined;
  /** Who hears the command's output now (tasks/result callers waiting for the end). */
  listeners: Set<JobContext['emit']>;
}

/**
 * `shell` as an MCP task. A command lives in this process only (it is killed when the service
 * stops), so unlike Task runs its MCP task is kept in memory: after a restart its ID is unknown,
 * and the message says why. The command outlives the POST that started it; `tasks/cancel` kills
 * its process tree.
 */
export class ShellTasks {
  readonly #tasks = new Map<string, ShellTask>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly shutdown: AbortSignal,
  ) {}

  static owns(taskId: string): boolean {
    return taskId.startsWith(ID_PREFIX);
  }

  /**
   * Starts the command (arguments already validated) and answers its MCP task. It runs as for an
   * event stream, so its output can reach whoever waits on it (nobody, at first).
   */
  start(args: JobArgs, ttl: number | undefined, token?: ProgressToken, caller?: CallerTag): Task {
    const entry = this.registry.get('shell');
    if (!entry) throw new McpError(ErrorCode.MethodNotFound, 'shell is not available on this service');
    const now = new Date().toISOString();
    const task: Task = { taskId: ID_PREFIX + randomUUID(), status: 'working', ttl: ttl ?? DEFAULT_TTL_MS, createdAt: now, lastUpdatedAt: now, pollInterval: POLL_MS };
    const stop = new AbortController();
    const listeners = new Set<JobContext['emit']>();
    const ctx = createJobContext(
      () => [stop.signal, this.shutdown],
      true,
      async (event) => {
        for (const listener of listeners) await listener(event);
      },
      undefined,
      caller,
    );
    const done = this.registry.execute(entry, args, ctx, 'mcp').then(async (r) => plainAnswer(r ?? { answer: 'RuntimeError: the Job produced no result', success: false, metadata: {} }));
    const record: ShellTask = { task, done, stop, token, listeners };
    this.#tasks.set(task.taskId, record);
    void done.then((response) => {
      if (task.status === 'working') task.status = response.success ? 'completed' : 'failed';
      task.lastUpdatedAt = new Date().toISOString();
      setTimeout(() => this.#tasks.delete(task.taskId), task.ttl ?? DEFAULT_TTL_MS).unref();
    });
    return { ...task };
  }

  #find(taskId: string): ShellTask {
    const record = this.#tasks.get(taskId);
    if (!record) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId} (shell tasks end with the service that ran them, and are kept for their ttl)`);
    return record;
  }

  get(taskId: string): Task {
    return { ...this.#find(taskId).task };
  }

  /** The command's JobResponse once it ends; `listen` hears its output until then. */
  async result(taskId: string, listen?: JobContext['emit']): Promise<JobResponse> {
    const { done, listeners } = this.#find(taskId);
    if (!listen) return done;
    listeners.add(listen);
    try {
      return await done;
    } finally {
      listeners.delete(listen);
    }
  }

  /** The progress token of the call that started the command, if it had one. */
  token(taskId: string): ProgressToken | undefined {
    return this.#tasks.get(taskId)?.token;
  }

  list(): Task[] {
    return [...this.#tasks.values()].map((r) => ({ ...r.task }));
  }

  async cancel(taskId: string): Promise<Task> {
    const record = this.#find(taskId);
    if (record.task.status !== 'working') throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${record.task.status}`);
    record.task.status = 'cancelled';
    record.stop.abort();
    await record.done;
    return { ...record.task };
  }
}
