import { DEFAULT_SHELL_TIMEOUT, ShellArguments, type ShellOutput } from '../../schemas/machine.js';
import { failed, ok } from '../../schemas/job-response.js';
import type { WorkerPool } from '../../workers/pool.js';
import { RuntimeError } from '../../core/errors.js';
import { defineJob } from '../../core/job.js';

/**
 * `shell`: runs the command on the thread pool (spawning and draining pipes stay off the request
 * thread). The answer is always the ShellOutput; success only for exit code 0.
 *
 * `settle()` waits for the commands still running: on shutdown their signal is aborted, and the
 * pool must outlive their tree kill, or the processes would be orphaned mid-kill.
 */
export function shellJob(pool: WorkerPool, workspace: string) {
  const running = new Set<Promise<ShellOutput>>();
  const job = defineJob({
    name: 'shell',
    description:
      'Runs a command with /bin/sh -c in the workspace, in its own process group. Keeps at most 1 MiB of stdout and of stderr; ' +
      'on timeout the whole process tree is killed and exit_code is null. Succeeds only when the exit code is 0.',
    input: ShellArguments,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run(args, ctx) {
      const run = pool.run('shell', { command: args.command, timeout: args.timeout ?? DEFAULT_SHELL_TIMEOUT, cwd: workspace }, ctx.signal);
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
