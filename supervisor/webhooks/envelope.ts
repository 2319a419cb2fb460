import { createHmac, randomUUID } from 'node:crypto';
import type { WebhookEnvelope, WebhookEventType } from '../../schemas/webhooks.js';

/** Header names of a delivery (docs/webhooks.md documents the scheme). */
export const HEADER_ID = 'X-Taskyard-Event-Id';
export const HEADER_TYPE = 'X-Taskyard-Event';
export const HEADER_TIMESTAMP = 'X-Taskyard-Timestamp';
export const HEADER_SIGNATURE = 'X-Taskyard-Signature';

/** A new envelope: its `id` is the event's identity, the same on every redelivery. */
export function envelopeOf(type: WebhookEventType, data: Record<string, unknown>): WebhookEnvelope {
  return { version: 1, id: `evt_${randomUUID()}`, type, created_at: new Date().toISOString(), data };
}

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + body`, keyed with the endpoint's secret. */
export function signatureOf(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
