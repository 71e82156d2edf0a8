/** Submission (`/add-messages`), operator commands (`/commands/*`) and reading one message. */
import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { AppError } from '../../../core/app-error.js';
import type { MessageCommands } from '../../../core/message-commands.js';
import type { SubmissionService } from '../../../core/submission-service.js';
import type { HttpEnv } from '../env.js';
import { batchParams, cleanupParams, clientId, addMessagesBody, idsParams, tenantParams } from '../message-schemas.js';
import { readBody, readJson, validate } from '../request-input.js';
import { toSubmissionItem, type SubmissionLimits } from '../submission-mapping.js';
import { commandContext } from './tenants.js';

export interface MessageRoutesDeps {
  submissions: SubmissionService;
  commands: MessageCommands;
  limits: SubmissionLimits & { maxBatchMessages: number };
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
    const body = await readBody(c, addMessagesBody);
    if (body.messages.length > deps.limits.maxBatchMessages) {
      throw new AppError('VALIDATION_FAILED', `too many messages in one request (${body.messages.length}, at most ${deps.limits.maxBatchMessages})`, {
        details: [{ path: 'messages', message: `at most ${deps.limits.maxBatchMessages} messages` }],
      });
    }
    const items = body.messages.map((raw, index) => toSubmissionItem(raw, index, deps.limits));
    const result = deps.submissions.submit(c.get('principal'), items, body.default_priority, c.get('requestId'));
    return c.json({ ok: true, queued: result.queued, rejected: result.rejected });
  };
  app.post('/add-messages', addMessages);
  app.post('/commands/add-messages', addMessages);

  app.post('/commands/run-now', async (c) => {
    const params = await readParams(c, tenantParams);
    return c.json({ ok: true, ...commands.runNow(commandContext(c), params.tenant_id) });
  });
  app.post('/commands/suspend', async (c) => {
    const params = await readParams(c, batchParams);
    return c.json({ ok: true, ...commands.suspend(commandContext(c), params.tenant_id, params.batch_code) });
  });
  app.post('/commands/activate', async (c) => {
    const params = await readParams(c, batchParams);
    return c.json({ ok: true, ...commands.activate(commandContext(c), params.tenant_id, params.batch_code) });
  });
  app.post('/commands/delete-messages', async (c) => {
    const params = await readParams(c, idsParams);
    return c.json({ ok: true, ...commands.deleteMessages(commandContext(c), params.tenant_id, params.ids) });
  });
  app.post('/commands/resend', async (c) => {
    const params = await readParams(c, idsParams);
    return c.json({ ok: true, ...commands.resend(commandContext(c), params.tenant_id, params.ids) });
  });
  app.post('/commands/cleanup-messages', async (c) => {
    const params = await readParams(c, cleanupParams);
    return c.json({ ok: true, ...commands.cleanup(commandContext(c), params.tenant_id, params.older_than_seconds) });
  });

  app.get('/messages/:id', (c) => {
    const id = validate(clientId, c.req.param('id'), 'message id');
    const params = validate(tenantParams, c.req.query(), 'query parameters');
    const { message, events } = commands.detail(commandContext(c), params.tenant_id, id);
    const status = message.suspended && (message.state === 'queued' || message.state === 'deferred') ? 'suspended' : message.state;
    return c.json({ message: { ...message, status }, events });
  });

  return app;
}
