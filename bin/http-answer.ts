import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * The CLI's HTTP client, over node:http(s) rather than the global `fetch`: the first use of
 * `fetch` (or `Response`, `Headers`) loads undici and compiles its llhttp wasm, which cost every
 * CLI call that reaches a service about half a second of CPU.
 */

/** What a request sends: a string body gets its content-length; a stream is sent as it reads. */
export interface RequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Readable;
}

/** A response whose headers arrived; its body is read once, by `text()`, `json()` or iterating `body`. */
export class HttpAnswer {
  readonly status: number;
  readonly statusText: string;
  /** The body as it arrives, in byte chunks. */
  readonly body: IncomingMessage;

  constructor(message: IncomingMessage) {
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? '';
    this.body = message;
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk as Buffer);
    // TextDecoder drops a leading BOM, as fetch's text() does.
    return new TextDecoder().decode(Buffer.concat(chunks));
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** Lets the body go unread: the connection is closed. */
  cancel(): void {
    this.body.destroy();
  }
}

/**
 * Sends one request; resolves when the response's headers arrive, rejects on a network failure
 * (the error carries its `code`, e.g. ECONNREFUSED). node:https is loaded only for an https URL.
 */
export async function send(url: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const headers: OutgoingHttpHeaders = { ...init.headers };
  if (typeof init.body === 'string' && headers['content-length'] === undefined) headers['content-length'] = Buffer.byteLength(init.body);
  return new Promise<HttpAnswer>((resolve, reject) => {
    const req = transport(target, { method: init.method ?? 'GET', headers });
    // A request-side failure after the answer came (the service answered before taking the whole
    // upload) settles nothing more: the promise is already resolved, and the listener keeps it from crashing.
    req.on('error', reject);
    req.on('response', (message) => resolve(new HttpAnswer(message)));
    const body = init.body;
    if (body === undefined || typeof body === 'string') {
      req.end(body);
      return;
    }
    body.on('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}
