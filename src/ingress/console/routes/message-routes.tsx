/**
 * Messages: the list (GET /ui/messages) and one message (/ui/messages/:tenant/:id),
 * with its PEC receipts' bytes; its actions are in message-actions.tsx.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { isAppError, notFound } from '../../../core/index.js';
import type { MessageDetail, BulkAction, MessageQuery, MessageRead } from '../../../core/message/index.js';
import { scopeTenant, scopeTenantOrAll } from '../../../core/tenant/index.js';
import {
  decodeCursor,
  encodeCursor,
  receiptResponse,
  validate,
  messageStatusOf,
  queueOverview,
} from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { batchOnly, blankToNull, filterOf, filtersQuery, hasFilter } from '../message-filter.js';
import { MessagePage } from '../pages/message.js';
import { MessagesPage, type MessageFilters } from '../pages/messages.js';
import { consoleContext, takeNotice } from '../request-context.js';
import { CONSOLE_PATH, currentSession } from '../session.js';
import { registerMessageActions } from './message-actions.js';

const PAGE_SIZE = 50;
const pathParams = z.object({ tenant: z.string().min(1).max(64), id: z.string().min(1).max(255) });

export const filterHref = (filters: MessageFilters, cursor: string | null): string => {
  const params = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== ''));
  if (cursor !== null) params.set('cursor', cursor);
  const query = params.toString();
  return `${CONSOLE_PATH}/messages${query === '' ? '' : `?${query}`}`;
};

/** Bulk actions over a search (never over an empty filter); suspend and activate where the filter is one batch of one tenant. */
const bulkOffered = (filters: MessageFilters, tenantId: string | null): BulkAction[] => {
  if (!hasFilter(filters)) return [];
  const actions: BulkAction[] = ['resend', 'retry-now', 'delete'];
  return batchOnly(filters) && tenantId !== null ? [...actions, 'suspend', 'activate'] : actions;
};

/**
 * Waits for a later attempt that "retry now" can bring forward (the same rule as POST /commands/retry-now),
 * judged at the whole second the page shows.
 */
const retryable = (message: MessageDetail, now: number): boolean =>
  !message.suspended &&
  (message.state === 'queued' || message.state === 'deferred') &&
  message.nextAttemptAt !== null &&
  Math.floor(message.nextAttemptAt / 1000) * 1000 > now;

/** GET /messages: a page of the search, this node's or in fleet mode every node's merged (the cursor holding each node's position). */
function registerList(app: Hono<ConsoleEnv>, deps: ConsoleDeps): void {
  const findPage = async (c: Context<ConsoleEnv>, query: Omit<MessageQuery, 'after'>, cursor: string | undefined) => {
    if (deps.fleetMessages) {
      const found = await deps.fleetMessages.search(consoleContext(c), query, cursor);
      return { messages: found.messages, next: found.nextCursor, missing: found.missingNodes };
    }
    const found = deps.search.find({ ...query, after: cursor === undefined ? null : decodeCursor(cursor) });
    return { messages: found.messages, next: found.next === null ? null : encodeCursor(found.next), missing: [] };
  };

  app.get('/messages', async (c) => {
    const session = currentSession(c);
    const { cursor, ...filters } = validate(filtersQuery, c.req.query(), 'filters');
    const tenantId = scopeTenantOrAll(session.principal, blankToNull(filters.tenant) ?? undefined);
    const found = await findPage(c, { ...filterOf(filters), tenantId, order: 'newest', limit: PAGE_SIZE }, cursor);
    const now = deps.clock.now();
    const waiting = queueOverview(deps.queue.counts(tenantId), null, now);
    return c.html(
      <MessagesPage
        session={session}
        filters={filters}
        messages={found.messages}
        missingNodes={found.missing}
        waiting={waiting}
        notice={takeNotice(c)}
        nextHref={found.next === null ? null : filterHref(filters, found.next)}
        firstHref={cursor === undefined ? null : filterHref(filters, null)}
        bulk={bulkOffered(filters, tenantId)}
      />,
    );
  });
}

/** One message's page, and the original bytes of its PEC receipts. */
function registerDetail(app: Hono<ConsoleEnv>, deps: ConsoleDeps, load: (c: Context<ConsoleEnv>) => MessageRead): void {
  /** This node's message, or in fleet mode the node's that holds it (shown without its actions, which act here). */
  const loadAnywhere = async (c: Context<ConsoleEnv>): Promise<MessageRead & { node: string | null }> => {
    try {
      return { ...load(c), node: null };
    } catch (error) {
      if (!deps.fleetMessages || !isAppError(error) || error.code !== 'NOT_FOUND') throw error;
      const { tenant, id } = validate(pathParams, c.req.param(), 'message');
      const found = await deps.fleetMessages.detail(consoleContext(c), tenant, id);
      // The node that holds it answers with the core's read model.
      return { ...found.detail, node: found.nodeId };
    }
  };

  app.get('/messages/:tenant/:id', async (c) => {
    const session = currentSession(c);
    const { message, events, why, pecReceipts, node } = await loadAnywhere(c);
    const tenantId = scopeTenant(session.principal, message.tenantId);
    const reasons = why.reasons.map((reason) => reason.code);
    return c.html(
      <MessagePage
        session={session}
        message={message}
        events={events}
        pecReceipts={pecReceipts}
        why={why}
        notice={takeNotice(c)}
        status={messageStatusOf(message)}
        node={node}
        headers={node === null ? await deps.headers.of(tenantId, message.clientId) : null}
        sync={deps.reports.get(tenantId)}
        suspendedBatch={why.waiting ? reasons.includes('batch_suspended') : null}
        retryable={retryable(message, deps.clock.now())}
      />,
    );
  });

  // A receipt's original bytes, within the session's tenant (another's is as absent as none) and only under the message it is about.
  app.get('/messages/:tenant/:id/pec/:receipt', (c) => {
    const { tenant, id } = validate(pathParams, c.req.param(), 'message');
    const receiptId = c.req.param('receipt');
    const found = deps.pecReceipts.raw(receiptId, scopeTenant(currentSession(c).principal, tenant));
    if (found === null || found.receipt.clientId !== id) throw notFound('receipt', receiptId);
    return receiptResponse(c, found);
  });
}

export function messageConsoleRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const load = (c: Context<ConsoleEnv>): MessageRead => {
    const { tenant, id } = validate(pathParams, c.req.param(), 'message');
    return deps.commands.detail(consoleContext(c), tenant, id);
  };
  registerList(app, deps);
  registerDetail(app, deps, load);
  registerMessageActions(app, deps, load);
  return app;
}
