/**
 * Runs async work one at a time per key, in call order: the plugin installer's changes (one
 * key), an agent session's info updates (one key per session). A failed piece of work rejects
 * its own caller only; the work queued behind it still runs.
 */
export class SerialQueue<K = string> {
  /** The settled end of each key's last queued work; a key is dropped once its queue runs dry. */
  readonly #tails = new Map<K, Promise<void>>();

  /** Runs `work` once every earlier work of `key` has settled; answers what `work` answers. */
  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    const next = (this.#tails.get(key) ?? Promise.resolve()).then(work);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    // Dropped before the caller sees the answer: an idle key holds nothing.
    return next.finally(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
  }

  /** How many keys have work queued or running. */
  get activeKeys(): number {
    return this.#tails.size;
  }
}
