/** Submission (`/add-messages`), operator commands (`/commands/*`) and reading one message. */
import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import type { MessageCommands } from '../../../core/message-commands.js';
import type { SubmissionService } from '../../../core/submission-service.js';
import type { CommandContext } from '../../../core/tenant-service.js';
import type { HttpEnv } from '../env.js';
import { batchParams, cleanupParams, clientId, idsParams, tenantParams } from '../message-schemas.js';
import { readJson, requireJson, validate } from '../request-input.js';
import type { SubmissionParser } from '../submission-parser.js';
import { commandContext } from './tenants.js';

export interface MessageRoutesDeps {
  submissions: SubmissionService;
  commands: MessageCommands;
  parseSubmission: SubmissionParser;
}

/** Command parameters may come as a JSON body, a query string, or both (the body wins). */
async function readParams<S extends z.ZodType>(c: Context<HttpEnv>, schema: S): Promise<z.output<S>> {
  const body = c.req.method === 'GET' ? {} : await readJson(c);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return validate(schema, body, 'parameters');
  return validate(schema, { ...c.req.query(), ...body }, 'parameters');
}

export function messageRoutes(deps: MessageRoutesDeps): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const { commands } = deps;

  const addMessages = async (c: Context<HttpEnv>) => {
    requireJson(c);
    const { items, defaultPriority } = await deps.parseSubmission(await c.req.arrayBuffer());
    const result = await deps.submissions.enqueue(c.get('principal'), items, defaultPriority, c.get('requestId'));
    return c.json({ ok: true, queued: result.queued, rejected: result.rejected });
  };
  app.post('/add-messages', addMessages);
  app.post('/commands/add-messages', addMessages);

  /** A command route: parameters validated by `schema`, its result answered with `ok: true`. */
  const command = <S extends z.ZodType>(path: string, schema: S, run: (ctx: CommandContext, params: z.output<S>) => object): void => {
    app.post(path, async (c) => c.json({ ok: true, ...run(commandContext(c), await readParams(c, schema)) }));
  };
  command('/commands/run-now', tenantParams, (ctx, p) => commands.runNow(ctx, p.tenant_id));
  command('/commands/suspend', batchParams, (ctx, p) => commands.suspend(ctx, p.tenant_id, p.batch_code));
  command('/commands/activate', batchParams, (ctx, p) => commands.activate(ctx, p.tenant_id, p.batch_code));
  command('/commands/delete-messages', idsParams, (ctx, p) => commands.deleteMessages(ctx, p.tenant_id, p.ids));
  command('/commands/resend', idsParams, (ctx, p) => commands.resend(ctx, p.tenant_id, p.ids));
  command('/commands/cleanup-messages', cleanupParams, (ctx, p) => commands.cleanup(ctx, p.tenant_id, p.older_than_seconds));

  app.get('/messages/:id', (c) => {
    const id = validate(clientId, c.req.param('id'), 'message id');
    const params = validate(tenantParams, c.req.query(), 'query parameters');
    const { message, events, why } = commands.detail(commandContext(c), params.tenant_id, id);
    // Seed 004: a sent message the remote side later returned is BOUNCED.
    const status = message.suspended && (message.state === 'queued' || message.state === 'deferred')
      ? 'suspended'
      : message.state === 'sent' && message.bounce_ts !== null ? 'bounced' : message.state;
    return c.json({ message: { ...message, status }, events, why });
  });

  return app;
}
