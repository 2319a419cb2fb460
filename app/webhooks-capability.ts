import { Type } from '../vendor/typebox.js';
import { ok } from '../schemas/job-response.js';
import { WebhookStatusAnswer } from '../schemas/webhooks.js';
import { READ_ONLY, defineJob } from '../core/job.js';
import { declareCapability } from './capability-contract.js';
import { Webhooks } from '../supervisor/webhooks/webhooks.js';

/** Signed webhooks on Task ends (config `webhooks`), and `webhook_status` for the console. */
export const webhooksCapability = declareCapability({
  name: 'webhooks',
  needs: ['tasks'],
  build: async (env, { tasks }) => {
    const webhooks = new Webhooks(env.config.webhooks, env.config.webhook_hosts, env.workspace, env.metrics);
    await webhooks.start(tasks.events);
    return {
      jobs: [
        defineJob({
          name: 'webhook_status',
          output: WebhookStatusAnswer,
          description:
            'Answers the configured webhook endpoints: [{url (without credentials), events, pending, given_up, delivered, ' +
            'last_delivery_at, last_error, last_error_at}]; [] without webhooks. Secrets are never shown.',
          input: Type.Object({}, { additionalProperties: false }),
          annotations: READ_ONLY,
          run: async () => ok(webhooks.status()),
        }),
      ],
      close: async () => webhooks.stop(),
    };
  },
});
