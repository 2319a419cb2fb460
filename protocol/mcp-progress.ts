import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { JobEvent } from '../schemas/events.js';

/** Longest log line quoted in a progress message; agents read these, a wall of text helps nobody. */
const MAX_LINE = 200;

/** Sends one `notifications/progress`; resolves once the transport took it. */
export type SendProgress = (progress: number, message: string) => Promise<void>;

/**
 * Sends progress to each of `tokens` through `notify` (the `sendNotification` of the request being
 * answered, so it goes on that request's stream); `meta` goes into each notification's `_meta`.
 */
export function progressTo(notify: (notification: ServerNotification) => Promise<void>, tokens: readonly ProgressToken[], meta?: Record<string, unknown>): SendProgress {
  return async (progress, message) => {
    for (const progressToken of tokens) await notify({ method: 'notifications/progress', params: { progressToken, progress, message, ...(meta ? { _meta: meta } : {}) } });
  };
}

/** A Task step as a person reads it: `train 40%`, or its name alone before it has a percentage. */
export function stepText(name: string, percentage: number | null): string {
  return percentage === null ? name : `${name} ${Math.round(percentage)}%`;
}

/** The Task logger's line head (`2026-01-02T03:04:05.678Z INFO `): the client has its own clock. */
const LOG_HEAD = /^\d{4}-\d\d-\d\dT[\d:.]+Z\s+(?:INFO\s+)?/;

/** The last non-empty line of a log chunk, shortened for a one-line message. */
function lastLine(content: string): string {
  const lines = content.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.replace(LOG_HEAD, '').trim();
    if (line !== '') return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
  }
  return '';
}

/** Series quoted in a progress message at most. */
const MAX_SERIES = 4;

/** The latest point of each series (a few), as `loss 0.41 @3 · accuracy 0.9 @3`. */
function metricsText(series: Readonly<Record<string, ReadonlyArray<{ value: number | null; step?: number }>>>): string {
  const parts: string[] = [];
  for (const [name, points] of Object.entries(series)) {
    const last = points.at(-1);
    if (!last) continue;
    const value = last.value === null ? 'NaN' : String(Number(last.value.toPrecision(4)));
    parts.push(`${name} ${value}${last.step === undefined ? '' : ` @${last.step}`}`);
    if (parts.length === MAX_SERIES) break;
  }
  return parts.join(' · ');
}

/**
 * Turns a Job's events into MCP progress notifications for one `tools/call` that carried a
 * progress token. Changes are coalesced: while one notification is being written, later events
 * only update the message, and the newest state goes out next. While nothing changes, the last
 * message is repeated every `intervalMs`, which is what keeps a client's
 * `resetTimeoutOnProgress` timer from cutting a long wait.
 */
export class ProgressReporter {
  #progress = 0;
  #step = '';
  #line = '';
  #dirty = false;
  #sending = false;
  #stopped = false;
  readonly #timer: NodeJS.Timeout;

  /**
   * `timed`: progress values are the time (ms, fractional) rather than a count from 1, for a token
   * that outlives one request (an MCP task's): every stream that carries it then sends values
   * above those sent before, as the spec requires of one token.
   */
  constructor(
    private readonly tool: string,
    private readonly send: SendProgress,
    intervalMs: number,
    private readonly timed = false,
  ) {
    this.#timer = setInterval(() => this.#heartbeat(), intervalMs);
    this.#timer.unref();
  }

  /** The message a person would want to see now, e.g. `train 40% · epoch 3/10 loss 0.41`. */
  get message(): string {
    const parts = [this.#step, this.#line].filter((p) => p !== '');
    return parts.length > 0 ? parts.join(' · ') : `${this.tool} is running`;
  }

  /** Takes one event of the Job (the `emit` of its context); never waits for the client. */
  note(event: JobEvent): Promise<void> {
    if (event.kind === 'progress') {
      this.#step = stepText(event.name, event.percentage);
    } else if (event.kind === 'log') {
      const line = lastLine(event.content);
      if (line === '') return Promise.resolve();
      this.#line = event.channel === 'stderr' ? `stderr: ${line}` : line;
    } else if (event.kind === 'artifact') {
      this.#line = `artifact ${event.path}`;
    } else if (event.kind === 'metrics') {
      const latest = metricsText(event.series);
      if (latest === '') return Promise.resolve();
      this.#line = latest;
    } else {
      return Promise.resolve();
    }
    this.#dirty = true;
    void this.#flush();
    return Promise.resolve();
  }

  /** Stops the heartbeat; nothing is sent afterwards (the response goes out next). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  #heartbeat(): void {
    // A change already on its way keeps the call alive as well as a repeat would.
    if (this.#sending) return;
    this.#dirty = true;
    void this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#dirty && !this.#stopped) {
        this.#dirty = false;
        this.#progress = this.timed ? Math.max(this.#progress + 1e-3, performance.timeOrigin + performance.now()) : this.#progress + 1;
        await this.send(this.#progress, this.message);
      }
    } catch {
      // The caller went away: its request's abort ends the Job; nothing more to tell it.
      this.stop();
    } finally {
      this.#sending = false;
    }
  }
}
