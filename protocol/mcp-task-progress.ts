import { RELATED_TASK_META_KEY, type ProgressToken, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { JobContext } from '../core/job.js';
import { ProgressReporter, progressTo } from './mcp-progress.js';

/** One `tasks/result` wait's progress: the Job context's `emit` to feed, and its end. */
export interface TaskWait {
  readonly emit: JobContext['emit'] | undefined;
  /** Stops its notifications (before the result goes out). */
  close(): void;
}

/**
 * Progress of MCP tasks (2025-11-25: a task-augmented request's progress token stays valid for
 * the task's whole life). A stateless server has no stream of its own to the client, so the
 * progress goes on the stream of a `tasks/result` waiting for the task, for the task's token and,
 * if it has one, the waiting request's own (so a client's resetTimeoutOnProgress keeps that long
 * request alive). A client that gave up on a wait cannot close it here (its cancellation comes on
 * another POST), so the task's token is served by the newest wait only: two streams would deliver
 * one token's values out of order. Values are times, growing across waits.
 */
export class TaskProgress {
  /** The newest wait of each task with one open. */
  readonly #newest = new Map<string, symbol>();

  constructor(private readonly intervalMs: number) {}

  /**
   * Opens a wait on `taskId` whose task carries `taskToken`; `own` is the waiting request's token;
   * `notify` sends on its stream; `label` names the work in messages.
   */
  open(taskId: string, label: string, taskToken: ProgressToken | undefined, own: ProgressToken | undefined, notify: (n: ServerNotification) => Promise<void>): TaskWait {
    const me = Symbol(taskId);
    this.#newest.set(taskId, me);
    const related = { [RELATED_TASK_META_KEY]: { taskId } };
    const toTask = taskToken === undefined ? undefined : progressTo(notify, [taskToken], related);
    const toOwn = own === undefined || own === taskToken ? undefined : progressTo(notify, [own], related);
    const release = () => {
      if (this.#newest.get(taskId) === me) this.#newest.delete(taskId);
    };
    if (!toTask && !toOwn) return { emit: undefined, close: release };
    const reporter = new ProgressReporter(
      label,
      async (progress, message) => {
        if (toTask && this.#newest.get(taskId) === me) await toTask(progress, message);
        if (toOwn) await toOwn(progress, message);
      },
      this.intervalMs,
      true,
    );
    return {
      emit: (event) => reporter.note(event),
      close: () => {
        reporter.stop();
        release();
      },
    };
  }
}
