/**
 * Provider webhooks: public, since a provider holds no API key;
 * each request is verified by its provider's own scheme (webhook-service.ts)
 * before anything is read from it. The body is taken as bytes, whatever its
 * media type (SNS posts JSON as text/plain), because signatures cover bytes,
 * and under webhooks.max_body_bytes (app.ts arms it), which is checked first.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { AppError } from '../../../core/index.js';
import { PROVIDERS, type WebhookReceiver } from '../../../core/provider/index.js';
import type { HttpEnv } from '../env.js';
import type { HttpErrorCode } from '../http-error.js';
import { requestBody } from '../request-body.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { identifier } from '../schemas.js';
import { field } from '../view-schemas/field.js';

const count = (description: string, example: number) => field(z.number().int().min(0), description, example);
const webhookAnswer = z.object({
  ok: field(z.literal(true), 'The request was verified and its events applied.', true),
  applied: count('Events applied to a message (its provider state, timeline, report, suppression).', 1),
  duplicates: count('Events applied before (a redelivery): nothing changed again.', 0),
  unmatched: count('Events about no message of the tenant: nothing changed.', 0),
  confirmed: field(z.boolean(), 'An SNS subscription confirmation was visited.', false),
});

export const WEBHOOK_ROUTES = {
  receive: {
    method: 'post',
    path: '/webhooks/{provider}/{tenant_id}',
    tag: 'Webhooks',
    summary: "A relay provider's events about mail it took from us: deliveries, bounces, complaints, drops",
    description:
      "Point the provider's webhook here: Amazon SES through an SNS HTTPS subscription (signature versions 1 and 2; the subscription is confirmed by itself), " +
      "SendGrid's signed Event Webhook, Mailgun's webhooks, Postmark's webhooks with basic auth and/or an `X-Webhook-Token` header. " +
      "Verified against the `provider` of the tenant's accounts; a request unsigned, badly signed, stale, or for a tenant without such an account answers 401 " +
      '`WEBHOOK_UNVERIFIED` (`details.reason` says which) and changes nothing; a body that is not what the provider sends answers 400. ' +
      'A body over `webhooks.max_body_bytes` (1 MiB by default, declared or chunked) answers 413 `PAYLOAD_TOO_LARGE` before it is read or any signature is checked. ' +
      "Events are tied to the tenant's messages by X-Genro-Mail-ID (passed as the provider's metadata), the provider's id from its 250 reply, or the Message-ID; " +
      'each is applied once however often it is delivered.',
    access: 'public',
    params: {
      provider: z.enum(PROVIDERS).meta({ description: 'The provider.', examples: ['ses'] }),
      tenant_id: identifier.meta({ description: 'The tenant whose mail it is.', examples: ['acme'] }),
    },
    responses: { 200: json('verified and applied', webhookAnswer) },
    errors: ['WEBHOOK_UNVERIFIED', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'UNAVAILABLE'],
  },
} as const satisfies Record<string, RouteDoc>;

const CODES: Record<number, HttpErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'WEBHOOK_UNVERIFIED',
  404: 'NOT_FOUND',
  503: 'UNAVAILABLE',
};

export function webhookRoutes(webhooks: WebhookReceiver): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, WEBHOOK_ROUTES.receive, async (c) => {
    const body = Buffer.from(await requestBody(c));
    const outcome = await webhooks.receive(c.req.param('provider') ?? '', c.req.param('tenant_id') ?? '', {
      body,
      header: (name) => c.req.header(name),
    });
    if (!outcome.ok) {
      const { status, code, message } = outcome.problem;
      throw new AppError<HttpErrorCode>(CODES[status] ?? 'WEBHOOK_UNVERIFIED', message, {
        details: { reason: code },
        transient: status === 503,
      });
    }
    return c.json({ ok: true, ...outcome.settlement, confirmed: outcome.confirmed });
  });
  return app;
}
