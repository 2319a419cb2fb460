import type { BodyWriter } from './http.js';
import { NUDGE_MAX_MS, NUDGE_MIN_MS, type UwsSocket } from './uws-socket.js';

/**
 * A body of known length (a file download): written with tryEnd, so uWS sends Content-Length
 * instead of chunked encoding. tryEnd takes what the socket accepts and leaves the rest to us
 * (it keeps no copy), so a write resolves once the whole chunk is on the socket and its memory
 * may be reused. The rest is written from inside onWritable, as uWS's own streaming example
 * does: resolving there and writing a turn later missed onWritable events (a 1 GiB download
 * waited on the 50 ms fallback about 20 times).
 */
export function sizedBody(out: UwsSocket, total: number): BodyWriter {
  const { res } = out;
  /** Offers `data` (which starts at body offset `at`) from `offset` on; true once all of it is on the socket. */
  const offer = (data: Uint8Array, at: number, offset: number): boolean => {
    let ok = false;
    let done = false;
    res.cork(() => ([ok, done] = res.tryEnd(data.subarray(offset - at), total)));
    if (done) out.aborted = true; // the response is complete
    return ok || done;
  };
  return {
    write: (chunk) =>
      new Promise<boolean>((resolve) => {
        const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        if (out.aborted) return resolve(false);
        const at = res.getWriteOffset();
        if (offer(data, at, at)) return resolve(true);
        // Fallback for a lost onWritable: offer the rest again after a while regardless.
        let timer: NodeJS.Timeout | undefined;
        let delay = NUDGE_MIN_MS;
        const settle = (written: boolean) => {
          clearTimeout(timer);
          out.settleWait = null;
          resolve(written && !out.disconnected);
        };
        const retry = (): boolean => {
          if (out.disconnected) return settle(false), true;
          const written = offer(data, at, res.getWriteOffset());
          if (written) settle(true);
          else arm();
          return written;
        };
        const arm = () => {
          clearTimeout(timer);
          timer = setTimeout(retry, delay);
          delay = Math.min(delay * 2, NUDGE_MAX_MS);
        };
        out.settleWait = () => settle(false);
        arm();
        res.onWritable(retry);
      }),
    end: () => {
      if (out.aborted) return;
      out.aborted = true;
      res.cork(() => {
        if (res.getWriteOffset() > 0 || total === 0) return void res.end();
        // Nothing written: a HEAD answer, which reports the length without a body. (This
        // build's endWithoutBody(length) leaves the connection stuck; the header by hand does not.)
        res.writeHeader('content-length', String(total));
        res.endWithoutBody();
      });
    },
    abort: () => out.drop(),
  };
}
