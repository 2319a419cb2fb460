import { DEFAULT_SHELL_TIMEOUT, ShellArguments, ShellOutput } from '../../schemas/machine.js';
import { failed, ok } from '../../schemas/job-response.js';
import type { WorkerPool } from '../../workers/pool.js';
import type { OutputChunk } from '../../workers/output-stream.js';
import { RuntimeError } from '../../core/errors.js';
import { defineJob, type JobContext } from '../../core/job.js';
import type { RunAs } from '../common/run-as.js';

/**
 * Output a slow watcher has not taken yet, beyond which further chunks are not sent (the answer
 * still keeps its 1 MiB per stream); the watcher sees the gap in the byte offsets.
 */
const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

/** Sends each piece of output to a watching caller as a `log` event of its channel. */
function outputEvents(ctx: JobContext): (chunk: OutputChunk) => void {
  let backlog = 0;
  return (chunk) => {
    const size = chunk.next_offset - chunk.start_offset;
    if (backlog + size > MAX_BACKLOG_BYTES) return;
    backlog += size;
    const { channel, content, start_offset, next_offset } = chunk;
    void ctx
      .emit({ kind: 'log', channel, content, start_offset, next_offset, file_size: next_offset, has_more_before: start_offset > 0, has_more_after: false, reset: false })
      .finally(() => (backlog -= size));
  };
}

/**
 * `shell`: runs the command on the thread pool (spawning and draining pipes stay off the request
 * thread). The answer is always the ShellOutput; success only for exit code 0.
 *
 * `settle()` waits for the commands still running: on shutdown their signal is aborted, and the
 * pool must outlive their tree kill, or the processes would be orphaned mid-kill.
 */
export function shellJob(pool: WorkerPool, workspace: string, runAs: RunAs | null = null) {
  // As `service.run_as` when set: the command cannot read the service's files nor its /proc entry.
  const user = runAs ? { uid: runAs.uid, gid: runAs.gid } : undefined;
  const running = new Set<Promise<ShellOutput>>();
  const job = defineJob({
    name: 'shell',
    output: ShellOutput,
    description:
      'Runs a command with /bin/sh -c in the workspace, in its own process group. Keeps at most 1 MiB of stdout and of stderr; ' +
      'on timeout the whole process tree is killed and exit_code is null. Succeeds only when the exit code is 0. ' +
      'A caller that reads events (or passes a progress token) sees stdout and stderr lines as they are written.',
    input: ShellArguments,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run(args, ctx) {
      const request = { command: args.command, timeout: args.timeout ?? DEFAULT_SHELL_TIMEOUT, cwd: workspace, stream: ctx.streaming, ...(user ? { user } : {}) };
      const run = pool.run('shell', request, ctx.signal, ctx.streaming ? outputEvents(ctx) : undefined);
      running.add(run);
      const output = await run
        .catch((err: Error) => {
          // Errors cross the thread boundary as plain Errors: give them the spec's type name.
          throw new RuntimeError(err.message);
        })
        .finally(() => running.delete(run));
      return output.exit_code === 0 ? ok(output) : failed(output);
    },
  });
  return { job, settle: async () => void (await Promise.allSettled(running)) };
}
