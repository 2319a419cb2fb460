import type { WebhookEndpointStatus, WebhookEntry, WebhookEnvelope } from '../../schemas/webhooks.js';
import { allowedClassOf } from '../common/host-check.js';
import { endpointKeyOf, Outbox, type Delivery } from './outbox.js';
import { send, type Target } from './sender.js';

/** Delay after the first failed attempt; doubled after each, up to BACKOFF_CAP_MS. */
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 15 * 60_000;
/** Deliveries of one endpoint under way at once (each event at most once). */
const CONCURRENCY = 4;

/** What an endpoint reports as it goes (the metrics). */
export interface DeliveryObserver {
  delivered(): void;
  failedAttempt(): void;
  givenUp(): void;
  pendingChanged(by: number): void;
}

/** The URL as shown anywhere: without user info (a URL may carry credentials). */
export function shownUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

export const backoffMs = (attempts: number): number => Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));

/**
 * One configured endpoint: its outbox, and the loop that sends what is due. A delivery is sent by
 * one attempt at a time (`#inFlight`), is removed from disk on a 2xx, and is otherwise rescheduled
 * with exponential backoff until the endpoint's `max_attempts` (default 12: about 1 h 10 min in all).
 */
export class WebhookEndpoint {
  readonly #entry: WebhookEntry;
  readonly #target: Target;
  readonly #outbox: Outbox;
  readonly #signal: AbortSignal;
  readonly #observer: DeliveryObserver;
  readonly #pending = new Map<string, Delivery>();
  readonly #inFlight = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #givenUp = 0;
  #delivered = 0;
  #lastDeliveryAt: string | null = null;
  #lastError: string | null = null;
  #lastErrorAt: string | null = null;

  constructor(entry: WebhookEntry, hosts: readonly string[], stateDir: string, signal: AbortSignal, observer: DeliveryObserver) {
    const url = new URL(entry.url);
    // Checked at config load already (webhookUrlProblems); null here would be a bug in that check.
    const allowed = allowedClassOf(url.hostname, hosts);
    if (allowed === null) throw new Error(`webhook host ${url.hostname} is not allowed`);
    this.#entry = entry;
    this.#target = { url, secret: entry.secret, allowed };
    this.#outbox = new Outbox(stateDir, endpointKeyOf(entry.url));
    this.#signal = signal;
    this.#observer = observer;
  }

  /** Opens the outbox and resumes what an earlier run left in it. */
  async start(): Promise<void> {
    await this.#outbox.open();
    this.#givenUp = await this.#outbox.givenUpCount();
    for (const delivery of await this.#outbox.load()) this.#track(delivery);
    this.#pump();
  }

  wants(type: string): boolean {
    return (this.#entry.events as readonly string[]).includes(type);
  }

  /** Puts the event on disk, then sends it. */
  async enqueue(envelope: WebhookEnvelope): Promise<void> {
    const delivery: Delivery = { event_id: envelope.id, type: envelope.type, body: JSON.stringify(envelope), attempts: 0, next_attempt_at: Date.now(), last_error: null };
    await this.#outbox.put(delivery);
    this.#track(delivery);
    this.#pump();
  }

  status(): WebhookEndpointStatus {
    return {
      url: shownUrl(this.#target.url),
      events: [...this.#entry.events],
      pending: this.#pending.size,
      given_up: this.#givenUp,
      delivered: this.#delivered,
      last_delivery_at: this.#lastDeliveryAt,
      last_error: this.#lastError,
      last_error_at: this.#lastErrorAt,
    };
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #track(delivery: Delivery): void {
    if (this.#pending.has(delivery.event_id)) return;
    this.#pending.set(delivery.event_id, delivery);
    this.#observer.pendingChanged(1);
  }

  #untrack(eventId: string): void {
    if (this.#pending.delete(eventId)) this.#observer.pendingChanged(-1);
  }

  /** Starts every due delivery (up to CONCURRENCY), and sets one timer for the next one due. */
  #pump(): void {
    if (this.#signal.aborted) return;
    clearTimeout(this.#timer);
    const now = Date.now();
    let next = Infinity;
    for (const delivery of this.#pending.values()) {
      if (this.#inFlight.has(delivery.event_id)) continue;
      if (delivery.next_attempt_at > now) next = Math.min(next, delivery.next_attempt_at);
      else if (this.#inFlight.size < CONCURRENCY) void this.#attempt(delivery);
    }
    if (next !== Infinity) this.#timer = setTimeout(() => this.#pump(), next - now).unref();
  }

  async #attempt(delivery: Delivery): Promise<void> {
    this.#inFlight.add(delivery.event_id);
    try {
      const error = await send(this.#target, delivery.event_id, delivery.type, delivery.body, this.#signal);
      // A stop aborted it: the file stays, the next start sends it again (same event id).
      if (this.#signal.aborted) return;
      if (error === null) {
        await this.#outbox.remove(delivery.event_id);
        this.#untrack(delivery.event_id);
        this.#delivered++;
        this.#lastDeliveryAt = new Date().toISOString();
        this.#observer.delivered();
        return;
      }
      this.#observer.failedAttempt();
      this.#lastError = `${delivery.type} ${delivery.event_id}: ${error}`;
      this.#lastErrorAt = new Date().toISOString();
      delivery.attempts++;
      delivery.last_error = error;
      if (delivery.attempts >= this.#entry.max_attempts) {
        await this.#outbox.giveUp(delivery);
        this.#untrack(delivery.event_id);
        this.#givenUp++;
        this.#observer.givenUp();
        console.warn(`taskyard: webhook ${shownUrl(this.#target.url)}: gave up ${delivery.event_id} after ${delivery.attempts} attempts (${error})`);
        return;
      }
      delivery.next_attempt_at = Date.now() + backoffMs(delivery.attempts);
      await this.#outbox.put(delivery);
    } catch (err) {
      // A disk error: kept in memory and tried again later; the file holds the last good state.
      console.error(`taskyard: webhook outbox ${delivery.event_id}`, err);
      delivery.next_attempt_at = Date.now() + backoffMs(Math.max(1, delivery.attempts));
    } finally {
      this.#inFlight.delete(delivery.event_id);
      this.#pump();
    }
  }
}
