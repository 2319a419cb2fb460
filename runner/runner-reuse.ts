/**
 * Between two command runs of one pooled runner: what the first left is ended, and the runner is
 * put back as it was when it started, so the next run sees nothing of the last. A command run's
 * code never runs inside the runner (runner/command-run.ts starts it as a child), so what a run
 * changes in the runner is known: its environment (the run's identity, PYTHONPATH, the CA
 * variable), its working directory, its title (the run_id a restarted service finds in /proc), its
 * stdout and stderr (the slot log it renamed onto the run's `task.log`), and the processes the
 * command left (ended by the run's mark and the runner's process group). Descriptors the runner
 * opens are close-on-exec (libuv opens every file so), so no command inherits them; the run's
 * files are closed by the run itself (see main.ts).
 */
import { closeSync, openSync } from 'node:fs';
import { leftoversSurvived } from './leftovers.js';
import { NO_RUN_YET, RUN_FLAG, SLOT_LOG_FLAGS } from './spawner-messages.js';

export class PooledRunnerState {
  readonly #slotLog: string;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #cwd: string;

  /** Taken before the runner's first run, with the slot log its stdout and stderr wrote to. */
  constructor(slotLog: string) {
    this.#slotLog = slotLog;
    this.#env = { ...process.env };
    this.#cwd = process.cwd();
  }

  /**
   * Resets the runner after its run. What the run's command left was ended when the command
   * exited, before its record was written (command-run.ts). False when the runner cannot serve
   * another run (something of a run survived SIGKILL, the pool directory is gone): it must exit.
   */
  endRun(): boolean {
    if (leftoversSurvived()) return false;
    try {
      this.#reopenOutput();
    } catch {
      return false;
    }
    for (const name of Object.keys(process.env)) if (!(name in this.#env)) delete process.env[name];
    Object.assign(process.env, this.#env);
    process.chdir(this.#cwd);
    process.title = [process.argv0, process.argv[1], RUN_FLAG, NO_RUN_YET].join(' ');
    return true;
  }

  /**
   * Points stdout and stderr (descriptors 1 and 2) at a fresh slot log, as the spawner started the
   * runner: the next run renames it onto its own `task.log`, and nothing more reaches the last
   * run's log. Node has no dup2, but open(2) always answers the lowest free descriptor: closing 1
   * then opening gives 1 again (nothing else in the runner opens files meanwhile: this is
   * synchronous, and no asynchronous file work is left between runs). Checked all the same.
   */
  #reopenOutput(): void {
    for (const fd of [1, 2]) {
      closeSync(fd);
      const opened = openSync(this.#slotLog, SLOT_LOG_FLAGS, 0o644);
      if (opened !== fd) {
        closeSync(opened);
        throw new Error(`the slot log opened as descriptor ${opened}, not ${fd}`);
      }
    }
  }
}
