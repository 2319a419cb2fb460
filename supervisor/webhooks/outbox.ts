import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir } from '../common/private-state.js';

/** One delivery as kept on disk until its endpoint answers 2xx (or it is given up). */
export interface Delivery {
  /** The envelope's id: the same on every attempt, so a receiver can dedupe. */
  readonly event_id: string;
  readonly type: string;
  /** The exact bytes sent and signed. */
  readonly body: string;
  attempts: number;
  /** Epoch ms of the next attempt. */
  next_attempt_at: number;
  last_error: string | null;
}

/** The directory name of an endpoint: a hash of its URL (the URL may carry credentials). */
export const endpointKeyOf = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 16);

const EVENT_FILE = /^evt_[0-9a-f-]{36}\.json$/;

/**
 * The durable outbox of one endpoint: `<state>/webhooks/outbox/<key>/<event_id>.json`, each
 * written atomically (temp file, fsync, rename) before its first attempt and removed once
 * delivered; given-up deliveries move to `<state>/webhooks/failed/<key>/`, where they stay
 * visible until someone removes them.
 */
export class Outbox {
  readonly #pending: string;
  readonly #failed: string;

  constructor(stateDir: string, key: string) {
    this.#pending = join(stateDir, 'webhooks', 'outbox', key);
    this.#failed = join(stateDir, 'webhooks', 'failed', key);
  }

  async open(): Promise<void> {
    await ensurePrivateDir(this.#pending);
    await ensurePrivateDir(this.#failed);
  }

  async put(delivery: Delivery): Promise<void> {
    const file = join(this.#pending, `${delivery.event_id}.json`);
    const temp = `${file}.tmp`;
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(delivery));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  }

  async remove(eventId: string): Promise<void> {
    await rm(join(this.#pending, `${eventId}.json`), { force: true });
  }

  /** Moves a delivery that failed every attempt aside, with its last error, for people to see. */
  async giveUp(delivery: Delivery): Promise<void> {
    await this.put(delivery);
    await mkdir(this.#failed, { recursive: true, mode: 0o700 });
    await rename(join(this.#pending, `${delivery.event_id}.json`), join(this.#failed, `${delivery.event_id}.json`));
  }

  /** Every delivery left by an earlier run (a restart resumes them); unreadable files are reported and skipped. */
  async load(): Promise<Delivery[]> {
    const found: Delivery[] = [];
    for (const name of await readdir(this.#pending)) {
      if (!EVENT_FILE.test(name)) continue;
      try {
        found.push(JSON.parse(await readFile(join(this.#pending, name), 'utf8')) as Delivery);
      } catch (err) {
        console.warn(`taskyard: webhook delivery ${join(this.#pending, name)} cannot be read (${(err as Error).message}); left in place`);
      }
    }
    return found;
  }

  async givenUpCount(): Promise<number> {
    return (await readdir(this.#failed)).filter((n) => EVENT_FILE.test(n)).length;
  }
}
