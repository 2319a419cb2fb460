import { connect, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';

export interface FollowerStats {
  /** Log lines received, all followers together. */
  lines: number;
  /** Milliseconds from a log line's timestamp (written by the Task) to its arrival at a follower, once all followers are open. */
  latencies: number[];
  results: number;
  errors: number;
  /** Followers that got their response head. */
  opened?: number;
}

/** A log line's timestamp inside the JSON text of a `log` event (lines start the content or follow an escaped newline). */
const LINE_TIME = /(?:"content":"|\\n)(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) /g;

/**
 * Decodes an HTTP/1.1 response body sent with chunked transfer encoding (or not at all) as bytes
 * arrive, handing on the payload text. Enough for the SSE answers of this service.
 */
class BodyDecoder {
  #head = true;
  #chunked = false;
  #pending: Buffer = Buffer.alloc(0);
  /** Bytes left in the current chunk; -1 while a size line is expected. */
  #left = -1;
  readonly #utf8 = new StringDecoder('utf8');

  constructor(
    private readonly onText: (text: string) => void,
    private readonly onHead: () => void,
  ) {}

  push(data: Buffer): void {
    this.#pending = this.#pending.length ? Buffer.concat([this.#pending, data]) : data;
    if (this.#head) {
      const end = this.#pending.indexOf('\r\n\r\n');
      if (end === -1) return;
      this.#chunked = /\r\ntransfer-encoding:\s*chunked/i.test(this.#pending.subarray(0, end).toString('latin1'));
      this.#pending = this.#pending.subarray(end + 4);
      this.#head = false;
      this.onHead();
    }
    if (!this.#chunked) {
      this.onText(this.#utf8.write(this.#pending));
      this.#pending = Buffer.alloc(0);
      return;
    }
    for (;;) {
      if (this.#left === -1) {
        // The CRLF closing the previous chunk may come only with the next one (uWS writes it so).
        if (this.#pending[0] === 0x0d && this.#pending[1] === 0x0a) this.#pending = this.#pending.subarray(2);
        const eol = this.#pending.indexOf('\r\n');
        if (eol === -1) return;
        this.#left = Number.parseInt(this.#pending.subarray(0, eol).toString('latin1'), 16);
        this.#pending = this.#pending.subarray(eol + 2);
        if (this.#left === 0) return;
      }
      if (this.#pending.length === 0) return;
      // Payload is handed on as it comes, without waiting for the rest of its chunk.
      const take = Math.min(this.#left, this.#pending.length);
      this.onText(this.#utf8.write(this.#pending.subarray(0, take)));
      this.#pending = this.#pending.subarray(take);
      this.#left -= take;
      if (this.#left === 0) this.#left = -1;
    }
  }
}

export interface FollowOptions {
  /** Once every follower is open, measure this long, then close them all instead of waiting for each result. */
  windowMs?: number;
  /** Called once every follower got its response head (the measured window starts). */
  onSteady?: () => void;
  /** Connections being opened at once: a burst of thousands overflows the listen backlog. */
  concurrency?: number;
  /** With `windowMs`: start the window after this long even if some followers never opened (they count as errors). */
  openLimitMs?: number;
  /** Loopback source addresses to spread connections over: 15,000 of them, run after run, exhaust one address's ephemeral ports. */
  sources?: number;
}

/**
 * Opens `perTask` SSE `stream_task` followers for each Task, each on its own raw socket (an HTTP
 * client library costs this 2-core machine more CPU than the service's side of a thousand
 * streams), and records, for every log line, the delay between the timestamp the Task's logger
 * wrote into the line and the moment the follower parsed it.
 */
export async function followAll(port: number, token: string, taskIds: string[], perTask: number, opts: FollowOptions = {}): Promise<FollowerStats> {
  const stats: FollowerStats = { lines: 0, latencies: [], results: 0, errors: 0 };
  // Lines written while the thousand streams are still being opened measure the opening, not
  // the delivery: only lines stamped after every follower got its response head count.
  const total = taskIds.length * perTask;
  let open = 0;
  let steadyFrom = Infinity;
  let steadyUntil = Infinity;
  const sockets = new Set<Socket>();
  let stopped = false;
  let slots = opts.concurrency ?? Infinity;
  const waiting: Array<() => void> = [];
  const steady = () => {
    if (steadyFrom !== Infinity) return;
    steadyFrom = Date.now();
    opts.onSteady?.();
    if (opts.windowMs === undefined) return;
    setTimeout(() => {
      steadyUntil = Date.now();
      stopped = true;
      for (const s of sockets) s.destroy();
      for (const turn of waiting.splice(0)) turn(); // followers still waiting to connect give up
    }, opts.windowMs);
  };
  const opened = () => {
    if (waiting.length) waiting.shift()!();
    else slots++;
    if (++open === total) steady();
  };
  const openLimit = opts.windowMs !== undefined && opts.openLimitMs !== undefined ? setTimeout(steady, opts.openLimitMs) : undefined;
  let n = 0;
  const follow = async (taskId: string) => {
    if (slots > 0) slots--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    const body = JSON.stringify({ arguments: { task_id: taskId } });
    const localAddress = opts.sources ? `127.0.${Math.floor((n % opts.sources) / 250)}.${2 + ((n % opts.sources) % 250)}` : undefined;
    n++;
    return new Promise<void>((resolve) => {
      if (stopped) return resolve(); // the window ended while it waited for its turn
      const socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
      sockets.add(socket);
      let text = '';
      let finished = false;
      let now = 0;
      let headed = false;
      // Frames are matched as text, not parsed: with a thousand streams on a 2-core machine, the
      // client's own work per frame shows up in the latencies it measures.
      const decoder = new BodyDecoder((part) => {
        text += part;
        let end: number;
        while ((end = text.indexOf('\n\n')) !== -1) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block.startsWith('event: result')) {
            stats.results++;
            finished = true;
            socket.end();
          } else if (block.startsWith('event: log')) {
            for (const m of block.matchAll(LINE_TIME)) {
              stats.lines++;
              const written = Date.parse(m[1]!);
              if (written >= steadyFrom && written < steadyUntil) stats.latencies.push(now - written);
            }
          }
        }
      }, () => {
        headed = true;
        opened();
      });
      socket.setNoDelay(true);
      socket.on('data', (data: Buffer) => {
        now = Date.now();
        decoder.push(data);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        if (!finished && !stopped) stats.errors++;
        if (!headed) opened(); // a follower that never opened must not hold up the window
        resolve();
      });
      socket.write(
        `POST /jobs/stream_task/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\nconnection: close\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  };
  await Promise.all(taskIds.flatMap((id) => Array.from({ length: perTask }, () => follow(id))));
  clearTimeout(openLimit);
  stats.opened = open;
  return stats;
}
