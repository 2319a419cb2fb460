import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/** One request as the receiver got it. */
export interface Received {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
}

/**
 * A real webhook receiver on a loopback port. `mode`: answer 200 (`ok`), or `hold` the request
 * open without answering (a receiver slow or stuck mid-delivery). `accepted` counts 2xx answers
 * per event id, as a receiver that dedupes would.
 */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  readonly accepted: Map<string, number>;
  mode: 'ok' | 'hold';
  close(): Promise<void>;
}

export async function startReceiver(t: Test, port = 0): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    accepted: new Map(),
    mode: 'ok',
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const header = (name: string) => String(req.headers[name] ?? '');
      const got = { id: header('x-taskyard-event-id'), type: header('x-taskyard-event'), timestamp: header('x-taskyard-timestamp'), signature: header('x-taskyard-signature'), body: Buffer.concat(chunks).toString('utf8') };
      receiver.received.push(got);
      if (receiver.mode === 'hold') return void held.push(res);
      receiver.accepted.set(got.id, (receiver.accepted.get(got.id) ?? 0) + 1);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  t.teardown(() => receiver.close());
  return receiver;
}

/** A loopback port that nothing listens on (taken, then freed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
