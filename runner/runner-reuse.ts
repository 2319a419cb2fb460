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
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { killLeftovers } from '../workers/kill-tree.js';
import { parseStat } from '../workers/process-tree.js';
import { NO_RUN_YET, RUN_FLAG, SLOT_LOG_FLAGS } from './spawner-messages.js';

/** How long a command's leftovers get after SIGTERM before SIGKILL. */
const LEFTOVER_GRACE_MS = 1_000;
/** Clock ticks per second of /proc start times (USER_HZ). */
const CLOCK_TICKS = 100;

/**
 * Whether anything of the run may be left: a member of this runner's process group, or a process
 * started since the run was taken that carries its mark. One synchronous pass over /proc (the
 * runner has nothing else to do between runs): with the promises of the asynchronous walk
 * (workers/process-tree.ts) the same look cost a short run a third of its CPU. Only when it finds
 * something does the full kill (killLeftovers) run.
 */
function anyLeftover(mark: string, since: number): boolean {
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let entry;
    try {
      entry = parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    } catch {
      continue; // gone meanwhile
    }
    if (!entry || entry.state === 'Z' || entry.state === 'X') continue;
    if (entry.pgid === process.pid) return true;
    if (Number(entry.startTime) < since) continue;
    try {
      if (`\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(`\0${mark}\0`)) return true;
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return false;
}

export class PooledRunnerState {
  readonly #slotLog: string;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #cwd: string;
  /** Clock ticks since boot when the current run was taken: whatever it started is younger. */
  #since = 0;

  /** Taken before the runner's first run, with the slot log its stdout and stderr wrote to. */
  constructor(slotLog: string) {
    this.#slotLog = slotLog;
    this.#env = { ...process.env };
    this.#cwd = process.cwd();
  }

  /** A run was taken now (before it started anything). */
  runTaken(): void {
    // /proc/uptime is in seconds; process start times are in clock ticks (USER_HZ, 100 on Linux).
    this.#since = Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * CLOCK_TICKS) - CLOCK_TICKS;
  }

  /**
   * Ends what the run `runId` left and resets the runner. False when that could not be done
   * (something of the run survived SIGKILL, the pool directory is gone): the runner must exit.
   */
  async endRun(runId: string): Promise<boolean> {
    const mark = `TASKYARD_RUN_ID=${runId}`;
    if (anyLeftover(mark, this.#since) && !(await killLeftovers(mark, this.#since, LEFTOVER_GRACE_MS))) return false;
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
