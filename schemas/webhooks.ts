import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Event types a webhook endpoint may subscribe to. */
export const WEBHOOK_EVENTS = ['task.succeeded', 'task.failed', 'task.cancelled', 'task.retrying'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Config `webhooks[]`: one endpoint. The secret signs every delivery and is never shown. */
export const WebhookEntry = Type.Object(
  {
    url: Type.String({ minLength: 1, pattern: '^https?://', description: 'http:// or https:// URL; loopback hosts, or hosts listed in webhook_hosts' }),
    events: Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { minItems: 1, uniqueItems: true, description: `Any of ${WEBHOOK_EVENTS.join(', ')}` }),
    secret: Type.String({ minLength: 16, description: 'HMAC-SHA256 key (at least 16 characters)' }),
    max_attempts: Type.Integer({ minimum: 1, maximum: 30, default: 12, description: 'Attempts before a delivery is given up (backoff 1 s doubling, at most 15 min apart)' }),
  },
  { additionalProperties: false },
);
export type WebhookEntry = Static<typeof WebhookEntry>;

/** Config `webhook_hosts`: host names or IP literals, besides loopback, that webhooks may be sent to. */
export const WebhookHosts = Type.Array(Type.String({ minLength: 1, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' }), { default: [], uniqueItems: true });

/** The JSON body of every delivery (`version` changes only with an incompatible envelope). */
export interface WebhookEnvelope {
  version: 1;
  id: string;
  type: WebhookEventType;
  created_at: string;
  data: Record<string, unknown>;
}

/** `webhook_status`: one endpoint, as the console shows it (URL without credentials, no secret). */
export const WebhookEndpointStatus = Type.Object({
  url: Type.String({ description: 'The endpoint URL without user info' }),
  events: Type.Array(Type.String()),
  pending: Type.Integer({ description: 'Deliveries on disk not yet acknowledged with a 2xx' }),
  given_up: Type.Integer({ description: 'Deliveries that failed every attempt (kept under .taskyard/webhooks/failed/)' }),
  delivered: Type.Integer({ description: 'Deliveries acknowledged since the service started' }),
  last_delivery_at: Type.Union([Type.String(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  last_error_at: Type.Union([Type.String(), Type.Null()]),
});
export type WebhookEndpointStatus = Static<typeof WebhookEndpointStatus>;
export const WebhookStatusAnswer = Type.Array(WebhookEndpointStatus);
