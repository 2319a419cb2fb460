import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError, type ProgressToken, type Task } from '@modelcontextprotocol/sdk/types.js';
import { plainAnswer, type JobResponse } from '../schemas/job-response.js';
import { createJobContext, type JobContext } from '../core/job.js';
import type { CallerTag } from '../core/caller.js';
import type { JobArgs, JobRegistry } from '../core/registry.js';
import { RetainedResults, type GoneReason, type RetentionLimits } from './retained-results.js';

const ID_PREFIX = 'taskyard-shell:';
/** How long a finished command's result is kept when the client asked for no ttl (ms). */
const DEFAULT_TTL_MS = 3_600_000;
const POLL_MS = 1000;
/**
 * Finished commands' results are kept for their ttl, but at most this many and this much in all:
 * each can hold 2 MiB of output, and a client may start any number of them.
 */
export const SHELL_RESULT_LIMITS: RetentionLimits = Object.freeze({ count: 256, bytes: 32 * 1024 * 1024, remembered: 10_000 });

const GONE: Readonly<Record<GoneReason, string>> = {
  expired: 'its ttl passed',
  dropped: `its result was dropped to bound the service's memory: it keeps the results of at most ${SHELL_RESULT_LIMITS.count} finished shell commands, ${SHELL_RESULT_LIMITS.bytes / 1024 / 1024} MiB in all, the oldest going first; run the command again, and fetch its result sooner`,
};

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
  readonly #finished: RetainedResults;

  constructor(
    private readonly registry: JobRegistry,
    private readonly shutdown: AbortSignal,
    limits: RetentionLimits = SHELL_RESULT_LIMITS,
  ) {
    this.#finished = new RetainedResults(limits, (id) => this.#tasks.delete(id));
  }

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
      caller,
    );
    const done = this.registry.execute(entry, args, ctx, 'mcp').then(async (r) => plainAnswer(r ?? { answer: 'RuntimeError: the Job produced no result', success: false, metadata: {} }));
    const record: ShellTask = { task, done, stop, token, listeners };
    this.#tasks.set(task.taskId, record);
    void done.then((response) => {
      if (task.status === 'working') task.status = response.success ? 'completed' : 'failed';
      task.lastUpdatedAt = new Date().toISOString();
      // Measured once, as the text block tasks/result sends: what holding it costs.
      this.#finished.keep(task.taskId, Buffer.byteLength(JSON.stringify(response)), task.ttl ?? DEFAULT_TTL_MS);
    });
    return { ...task };
  }

  #find(taskId: string): ShellTask {
    const record = this.#tasks.get(taskId);
    if (record) return record;
    const gone = this.#finished.gone(taskId);
    if (gone) throw new McpError(ErrorCode.InvalidParams, `Task ${gone}: ${taskId} finished, and ${GONE[gone]}`);
    throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId} (shell tasks end with the service that ran them, and are kept for their ttl)`);
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
