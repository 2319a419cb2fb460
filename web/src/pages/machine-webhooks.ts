import { errorText } from '../api/client.js';
import type { WebhookEndpointStatus } from '../api/types.js';
import type { PageContext } from '../app/page.js';
import { h, notice } from '../ui/dom.js';

/** The Webhooks card's table: each endpoint (URL without credentials), pending, last delivery, last error. */
function webhooksTable(endpoints: readonly WebhookEndpointStatus[]): HTMLElement {
  if (!endpoints.length) return notice('No webhooks configured (config webhooks).', 'empty');
  return h(
    'table',
    { class: 'grid', 'aria-label': 'Webhook endpoints' },
    h('thead', {}, h('tr', {}, ['endpoint', 'events', 'pending', 'delivered', 'given up', 'last delivery', 'last error'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      endpoints.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, h('code', {}, e.url)),
          h('td', {}, e.events.join(', ')),
          h('td', {}, String(e.pending)),
          h('td', {}, String(e.delivered)),
          h('td', {}, e.given_up ? h('span', { class: 'badge badge-fail' }, String(e.given_up)) : '0'),
          h('td', {}, e.last_delivery_at ?? '—'),
          h('td', {}, e.last_error ? `${e.last_error_at ?? ''} ${e.last_error}` : '—'),
        ),
      ),
    ),
  );
}

/** Fills `into` with this service's webhook endpoints (always this service: its config, its outbox). */
export async function refreshWebhooks(into: HTMLElement, ctx: PageContext): Promise<void> {
  try {
    const endpoints = await ctx.api.answer<WebhookEndpointStatus[]>('webhook_status', {}, { signal: ctx.signal, local: true });
    into.replaceChildren(webhooksTable(endpoints));
  } catch (err) {
    if (!ctx.signal.aborted) into.replaceChildren(notice(errorText(err), 'error'));
  }
}
