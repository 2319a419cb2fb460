import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { PoolKind, PoolMessage, PoolTasks } from './pool-tasks.js';

/**
 * Facade over Piscina for previews and shell. An abort is delivered to the running handler as a
 * message (so it can kill its child processes) instead of terminating the thread, which would
 * orphan them.
 */
export class WorkerPool {
  readonly #piscina: Piscina;

  constructor(threads = Math.max(2, Math.min(8, availableParallelism()))) {
    this.#piscina = new Piscina({
      filename: new URL('./pool-worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 60_000,
      // Shell commands wait on child processes, so a thread may hold several at once.
      concurrentTasksPerWorker: 4,
    });
  }

  async run<K extends PoolKind>(kind: K, input: PoolTasks[K]['input'], signal?: AbortSignal): Promise<PoolTasks[K]['output']> {
    const { port1, port2 } = new MessageChannel();
    const onAbort = () => port1.postMessage('abort');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      const message: PoolMessage<K> = { kind, input, abort: port2 };
      return (await this.#piscina.run(message, { transferList: [port2] as never })) as PoolTasks[K]['output'];
    } finally {
      signal?.removeEventListener('abort', onAbort);
      port1.close();
    }
  }

  async close(): Promise<void> {
    await this.#piscina.destroy();
  }
}
