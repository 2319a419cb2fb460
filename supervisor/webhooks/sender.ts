import { HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, HEADER_TYPE, signatureOf } from './envelope.js';
import { checkedLookup, type AddressClass } from '../common/host-check.js';
import { lazyBuiltin } from '../../core/lazy-builtin.js';

/** Loaded with the first delivery: most services send none. */
const http = lazyBuiltin<typeof import('node:http')>('node:http');
const https = lazyBuiltin<typeof import('node:https')>('node:https');

/** Milliseconds one attempt may take, connect to the end of the answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** An endpoint as the sender needs it. */
export interface Target {
  readonly url: URL;
  readonly secret: string;
  readonly allowed: AddressClass;
}

/**
 * One POST of `body`, signed with a fresh timestamp; resolves null on a 2xx, else the reason.
 * Redirects are not followed (a 3xx is a failure); the socket goes only to an address of the
 * allowed class (host-check.ts).
 */
export function send(target: Target, eventId: string, type: string, body: string, signal: AbortSignal): Promise<string | null> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'taskyard-webhooks/1',
    [HEADER_ID]: eventId,
    [HEADER_TYPE]: type,
    [HEADER_TIMESTAMP]: timestamp,
    [HEADER_SIGNATURE]: signatureOf(target.secret, timestamp, body),
  };
  const { request } = target.url.protocol === 'https:' ? https() : http();
  return new Promise((resolve) => {
    // A hard bound on the whole attempt (a socket timeout alone would let a trickling answer run on).
    const deadline = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    const req = request(target.url, { method: 'POST', headers, lookup: checkedLookup(target.allowed), signal: AbortSignal.any([signal, deadline]) }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      res.on('end', () => resolve(code >= 200 && code < 300 ? null : code >= 300 && code < 400 ? `HTTP ${code} (redirects are not followed)` : `HTTP ${code}`));
      res.on('error', (err) => resolve(err.message));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (deadline.aborted && !signal.aborted) return resolve(`no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`);
      resolve(err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message);
    });
    req.end(body);
  });
}
