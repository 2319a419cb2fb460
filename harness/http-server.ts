import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface PlainServer {
  readonly url: string;
  readonly port: number;
  /** Every request head seen so far, in arrival order. */
  readonly seen: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
}

/**
 * A real `node:http` server on a free loopback port (an upstream behind the proxy, or a fake
 * target that answers badly), closed with all its connections when the test ends.
 */
export async function startPlainServer(t: Pick<Test, 'teardown'>, handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<PlainServer> {
  const seen: PlainServer['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    Promise.resolve(handle(req, res)).catch((err: unknown) => {
      res.destroy(err as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${port}`, port, seen };
}

/** A loopback port that nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
