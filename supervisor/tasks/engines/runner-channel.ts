import type { Socket } from 'node:net';
import { onMessageLines } from '../../../runner/message-check.js';
import { RUNNER_EVENTS, type RunnerEvent } from '../../../runner/spawner-messages.js';

/** A runner's message, or `closed` once its channel closed (then for good). */
export type ChannelEvent = RunnerEvent | { type: 'closed' };

/**
 * A pooled runner's channel as the service reads it: each checked message in order, awaited one
 * at a time, read from the moment it is handed over (an idle runner says nothing; its channel's
 * end is then seen at once). A runner that serves more than one command run speaks on it again
 * after each run (`ended`, then `ready`), so its messages are queued, not taken by the first reader.
 */
export class RunnerChannel {
  readonly socket: Socket;
  readonly #queue: ChannelEvent[] = [];
  #reader: ((event: ChannelEvent) => void) | undefined;
  #closed = false;

  constructor(socket: Socket, pid: number | null) {
    this.socket = socket;
    // The service's own handles keep it alive; an idle runner must not keep a stopping one up.
    socket.unref();
    socket.on('error', () => undefined); // its close says what matters
    const refused = (error: string) => console.error(`taskyard: pooled runner ${pid}: ${error}; ignored`);
    onMessageLines(socket, RUNNER_EVENTS, (event) => this.#push(event), refused);
    // 'close' comes after everything the runner wrote was read: no message by then, none will come.
    socket.once('close', () => this.#push({ type: 'closed' }));
  }

  /** The next message, or `closed` (at once, and ever after, once the channel closed). */
  next(): Promise<ChannelEvent> {
    const event = this.#queue.shift();
    if (event) return Promise.resolve(event);
    if (this.#closed) return Promise.resolve({ type: 'closed' });
    return new Promise((resolve) => (this.#reader = resolve));
  }

  /** The next message that is not `ready` (an answer to a run, its end, or `closed`). */
  async answer(): Promise<Exclude<ChannelEvent, { type: 'ready' }>> {
    for (;;) {
      const event = await this.next();
      if (event.type !== 'ready') return event;
    }
  }

  /** Closes it: the runner reads its end and exits. */
  destroy(): void {
    this.socket.destroy();
  }

  #push(event: ChannelEvent): void {
    if (this.#closed) return;
    if (event.type === 'closed') this.#closed = true;
    const reader = this.#reader;
    this.#reader = undefined;
    if (reader) reader(event);
    else if (event.type !== 'closed') this.#queue.push(event);
  }
}
