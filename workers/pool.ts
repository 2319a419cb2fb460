import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { within } from './within.js';
import { NOTES_DONE, type PoolKind, type PoolMessage, type PoolNote, type PoolTasks } from './pool-tasks.js';

/** How long an answer waits for notes still in flight from its worker (they come first, on another port). */
const NOTES_GRACE_MS = 1000;

/**
 * Facade over Piscina for previews and shell. An abort is delivered to the running handler as a
 * message (so it can kill its child processes) instead of terminating the thread, which would
 * orphan them.
 *
 * The pool (Piscina and its threads) starts with the first piece of work, not with the service:
 * a thread is a Node isolate loading the worker's modules (~150 ms of CPU), which a service that
 * never previews a file nor runs `shell` would pay for nothing. Once started, one thread stays
 * ready as before.
 */
export class WorkerPool {
  readonly #threads: number;
  #piscina: Promise<Piscina> | undefined;
  #closed = false;

  constructor(threads = Math.max(2, Math.min(8, availableParallelism()))) {
    this.#threads = threads;
  }

  #started(): Promise<Piscina> {
    if (this.#closed) return Promise.reject(new Error('the worker pool is closed'));
    return (this.#piscina ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          filename: new URL('./pool-worker.js', import.meta.url).href,
          minThreads: 1,
          maxThreads: this.#threads,
          idleTimeout: 60_000,
          // Shell commands wait on child processes, so a thread may hold several at once.
          concurrentTasksPerWorker: 4,
        }),
    ));
  }

  /**
   * Runs one piece of work; `onNote` hears what it reports while it runs, every note before the
   * answer resolves.
   */
  async run<K extends PoolKind>(kind: K, input: PoolTasks[K]['input'], signal?: AbortSignal, onNote?: (note: PoolNote<K>) => void): Promise<PoolTasks[K]['output']> {
    const { port1, port2 } = new MessageChannel();
    const onAbort = () => port1.postMessage('abort');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    let notesDone: Promise<void> | undefined;
    if (onNote) {
      notesDone = new Promise((resolve) => port1.on('message', (m: PoolNote<K> | typeof NOTES_DONE) => (m === NOTES_DONE ? resolve() : onNote(m))));
    }
    try {
      const message: PoolMessage<K> = { kind, input, abort: port2 };
      const output = (await (await this.#started()).run(message, { transferList: [port2] as never })) as PoolTasks[K]['output'];
      // The answer and the notes travel on different ports: let the notes finish first.
      if (notesDone) await within(notesDone, NOTES_GRACE_MS);
      return output;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      port1.close();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await (await this.#piscina)?.destroy();
  }
}
