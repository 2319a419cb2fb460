import { renameSync, rmSync } from 'node:fs';
import { RUN_FLAG, type RunAssignment, type RunnerEvent } from './spawner-messages.js';

function send(event: RunnerEvent): void {
  if (process.connected) process.send!(event);
}

/**
 * How a runner learns its run. Started for one run (the spawner's direct start, or a tool such as
 * `taskyard task run`), the TASKYARD_TASK_* identity is in its environment already. Started ahead
 * of need by the spawner's pool, it waits idle until the spawner hands it a run: then it moves its
 * slot log onto the run's `task.log` (its stdout and stderr keep writing to the same file), takes
 * the identity into its environment and working directory, and names the run in its command line,
 * where a restarted service recognises it in /proc.
 */
export async function takeRun(): Promise<void> {
  if (process.env['TASKYARD_TASK_DIR']) return;
  const slotIndex = process.argv.indexOf('--slot-log');
  const slotLog = slotIndex > 0 ? process.argv[slotIndex + 1] : undefined;
  if (!slotLog || !process.send) throw new Error('task runner: TASKYARD_TASK_DIR is not set and no spawner hands over a run');
  // Idle when the spawner goes: nothing to run, nothing to keep.
  const leaveIdle = () => {
    rmSync(slotLog, { force: true });
    process.exit(0);
  };
  process.once('disconnect', leaveIdle);
  const run = await new Promise<RunAssignment>((resolve) => {
    process.once('message', (message: RunAssignment) => resolve(message));
    send({ type: 'ready' });
  });
  process.off('disconnect', leaveIdle);
  try {
    renameSync(slotLog, run.logFile);
  } catch (err) {
    send({ type: 'declined', message: (err as Error).message });
    rmSync(slotLog, { force: true });
    process.exit(0);
  }
  Object.assign(process.env, run.env, { TASKYARD_TASK_DIR: run.cwd });
  process.chdir(run.cwd);
  // Same length as the arguments it replaces (NO_RUN_YET is as long as a run_id), so it fits.
  process.title = [process.argv0, process.argv[1], RUN_FLAG, run.runId].join(' ');
  send({ type: 'accepted' });
  process.disconnect();
}
