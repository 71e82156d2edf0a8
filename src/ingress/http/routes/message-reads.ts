/** Reading messages: GET /messages (a page of a search) and GET /messages/{id} (one message), in fleet mode across every node. */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { MessageSearch, MessageCommands } from '../../../core/message/index.js';
import type { FleetMessages } from '../../../core/fleet/index.js';
import { scopeTenantOrAll } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { readQuery, validate } from '../request-input.js';
import { clientId, tenantParams } from '../message-schemas.js';
import { searchFilterFields } from '../message-filter-schemas.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { messageDetail } from '../view-schemas/message-detail.js';
import { messagePage } from '../view-schemas/message.js';
import { viewMessageDetail } from '../views/message-detail-view.js';
import { viewMessageSummary } from '../views/message-summary-view.js';
import { decodeCursor, encodeCursor } from './message-cursor.js';
import { filterFields } from './message-filter.js';
import { commandContext } from './tenants.js';

const listQuery = z
  .object({
    ...searchFilterFields,
    sort: z
      .enum(['newest', 'next_attempt'])
      .optional()
      .meta({
        description:
          '`newest` first (the default), or `next_attempt`: waiting messages by their next attempt, soonest first.',
        examples: ['next_attempt'],
      }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(500)
      .optional()
      .meta({ description: 'Messages per page, 1-500. Default 50.', examples: [100] }),
    cursor: z
      .string()
      .max(4000)
      .optional()
      .meta({
        description: "The `next_cursor` of the previous page, unchanged (in fleet mode it holds each node's position).",
        examples: ['eyJwayI6MTIzNH0'],
      }),
  })
  .strict();

const messages = { tag: 'Messages', access: 'tenant' } as const;

/** The documentation of the read routes (a part of MESSAGE_ROUTES). */
export const MESSAGE_READ_ROUTES = {
  search: {
    ...messages,
    method: 'get',
    path: '/messages',
    summary: 'Find messages, newest first',
    description:
      '`sort=next_attempt`: waiting ones by next attempt. `q`: words of the subject, sender and recipients, all required, the last also as a prefix; full text finds a message about a second after it was accepted. `cursor`: the `next_cursor` of the previous page.',
    query: listQuery,
    responses: { 200: json('a page of messages', messagePage) },
  },
  detail: {
    ...messages,
    method: 'get',
    path: '/messages/{id}',
    summary: "A message's state, its event timeline and why it waits",
    params: {
      id: clientId.meta({
        description: 'The client id of the message (its `id` at submission).',
        examples: ['inv-2025-001'],
      }),
    },
    query: tenantParams,
    responses: {
      200: json('the message, its timeline, why it waits and its PEC receipts (see GET /pec-receipts)', messageDetail),
    },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

export interface MessageReadDeps {
  commands: Pick<MessageCommands, 'detail'>;
  search: MessageSearch;
  fleet?: FleetMessages | null;
}

export function registerMessageReads(app: Hono<HttpEnv>, deps: MessageReadDeps): void {
  const routes = MESSAGE_READ_ROUTES;

  // Newest first (or by next attempt), filtered, full text with `q`; `next_cursor` pages on.
  on(app, routes.search, async (c) => {
    const query = readQuery(c, routes.search.query);
    const asked = {
      tenantId: scopeTenantOrAll(c.get('principal'), query.tenant_id),
      ...filterFields(query),
      order: query.sort ?? 'newest',
      limit: query.limit ?? 50,
    };
    // Fleet mode: every node's page merged, the cursor holding each node's position, missing nodes named.
    if (deps.fleet) {
      const found = await deps.fleet.search(commandContext(c), asked, query.cursor);
      return c.json({
        messages: found.messages.map(viewMessageSummary),
        next_cursor: found.nextCursor,
        missing_nodes: found.missingNodes,
      });
    }
    const found = deps.search.find({ ...asked, after: query.cursor === undefined ? null : decodeCursor(query.cursor) });
    return c.json({
      messages: found.messages.map(viewMessageSummary),
      next_cursor: found.next === null ? null : encodeCursor(found.next),
    });
  });

  on(app, routes.detail, async (c) => {
    const id = validate(routes.detail.params.id, c.req.param('id'), 'message id');
    const params = readQuery(c, routes.detail.query);
    if (deps.fleet) {
      const found = await deps.fleet.detail(commandContext(c), params.tenant_id, id);
      // The node that holds it answers with the core's read model; it is worded here, as a local one is.
      return c.json({ ...viewMessageDetail(found.detail), node_id: found.nodeId, missing_nodes: found.missingNodes });
    }
    return c.json(viewMessageDetail(deps.commands.detail(commandContext(c), params.tenant_id, id)));
  });
}
