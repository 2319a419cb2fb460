import { Worker } from 'node:worker_threads';
import { HttpError } from '../core/errors.js';
import type { ParseReply, ParseRequest } from './json-parse-messages.js';

/**
 * Bodies from this size on are parsed on the parse thread. Decoding and parsing a body costs
 * about as much per byte however few values it holds (the value count is bounded apart), and on
 * the event loop a 16 MiB string held every other request for 300 ms or more, most of it touching
 * fresh memory for the copies (bytes → text → value); handed to the thread, the loop only takes
 * the parsed value in. Smaller bodies (nearly every call) stay on the loop: a round trip to the
 * thread costs more than parsing them.
 */
export const OFF_LOOP_BYTES = 1024 * 1024;

interface Waiter {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/**
 * One thread, started on first use, that parses large JSON bodies in the order they come. It does
 * not keep the process alive while idle; if it dies (out of memory), the bodies it held fail and
 * the next one starts a new thread.
 */
class ParseThread {
  #worker: Worker | null = null;
  readonly #waiting = new Map<number, Waiter>();
  #nextId = 0;

  parse(bytes: Uint8Array, move: boolean): Promise<unknown> {
    const worker = this.#start();
    const id = this.#nextId++;
    const request: ParseRequest = { id, bytes };
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      if (this.#waiting.size === 1) worker.ref();
      worker.postMessage(request, move ? [bytes.buffer as ArrayBuffer] : []);
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./json-parse-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: ParseReply) => this.#settle(reply));
    const lost = (why: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      for (const waiter of this.#waiting.values()) waiter.reject(why);
      this.#waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the JSON parse thread ended (exit code ${code})`)));
    return (this.#worker = worker);
  }

  #settle(reply: ParseReply): void {
    const waiter = this.#waiting.get(reply.id);
    if (!waiter) return;
    this.#waiting.delete(reply.id);
    if (this.#waiting.size === 0) this.#worker?.unref();
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new HttpError(reply.status, reply.detail));
  }
}

const thread = new ParseThread();

/**
 * `parseJson` on the parse thread: the same value, or the same HttpError. With `move`, the bytes'
 * memory (which must be theirs alone) moves to the thread instead of being copied, and is gone here.
 */
export function parseJsonOffLoop(bytes: Uint8Array, move: boolean): Promise<unknown> {
  return thread.parse(bytes, move);
}
