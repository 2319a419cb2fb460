/**
 * Holds pooled runner starts back while the service cannot receive their channels. A service out
 * of file descriptors (`ulimit -n`, many followers) gets the message that passes a ready runner's
 * channel without the descriptor; Node retries, gives up with a `SentHandleNotReceivedWarning`,
 * and the runner, its channel closed, exits: refilled at once, the pool started runners back to
 * back for as long as descriptors were short (over 1,000 Node starts, ~30 s of CPU, once a crash
 * of the spawner in Node's handle passing). Each lost channel doubles a pause in refills, up to
 * MAX_PAUSE_MS, so runners start again soon after descriptors are freed; the log says so once per
 * shortage.
 */

/** The warning Node emits when a passed handle did not reach the receiving process. */
export const HANDLE_LOST_WARNING = 'SentHandleNotReceivedWarning';
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 4_000;

export class HandoverBackoff {
  readonly #resume: () => void;
  readonly #log: (line: string) => void;
  #pauseMs = 0;
  #until = 0;
  #told = false;
  #timer: NodeJS.Timeout | undefined;

  /** `resume` refills the pool once a pause is over; `log` writes one line to the service's log. */
  constructor(resume: () => void, log: (line: string) => void) {
    this.#resume = resume;
    this.#log = log;
  }

  /** Whether runner starts are held back now. */
  get holding(): boolean {
    return Date.now() < this.#until;
  }

  /** A ready runner's channel did not reach the service: pause refills, longer each time. */
  lost(): void {
    this.#pauseMs = Math.min(MAX_PAUSE_MS, this.#pauseMs === 0 ? FIRST_PAUSE_MS : this.#pauseMs * 2);
    this.#until = Date.now() + this.#pauseMs;
    if (!this.#told) {
      this.#told = true;
      this.#log(
        'taskyard: the service could not receive a task runner (it is short of file descriptors: raise its `ulimit -n` or close connections); ' +
          `pooled runners are started again at growing intervals, up to every ${MAX_PAUSE_MS / 1000} s, until it can`,
      );
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#resume(), this.#pauseMs);
  }

  /** A runner reached the service and took a run: the shortage is over (a next one is logged again). */
  recovered(): void {
    this.#pauseMs = 0;
    this.#told = false;
  }
}
