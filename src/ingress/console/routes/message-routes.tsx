/**
 * Messages: the list (GET /ui/messages), one message (/ui/messages/:tenant/:id),
 * and its actions, each a confirmation page (GET .../confirm/:action) and a
 * POST that runs the same core command as the API, audited as `<actor>@console`.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AppError, isAppError, notFound } from '../../../core/app-error.js';
import type { MessageDetail } from '../../../core/message-admin.js';
import type { BulkAction } from '../../../core/message-bulk.js';
import { messageStatus, type MessageQuery } from '../../../core/message-search.js';
import { scopeTenant, scopeTenantOrAll } from '../../../core/principal.js';
import type { CommandContext } from '../../../core/tenant-service.js';
import { decodeCursor, encodeCursor } from '../../http/routes/messages.js';
import { receiptResponse } from '../../http/routes/pec.js';
import { validate } from '../../http/request-input.js';
import { queueOverview } from '../../http/views/queue-overview.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { batchOnly, blankToNull, filterOf, filtersQuery, hasFilter } from '../message-filter.js';
import { ConfirmPage, MESSAGE_ACTIONS, type MessageAction } from '../pages/confirm.js';
import { MessagePage } from '../pages/message.js';
import { messageHref, MessagesPage, type MessageFilters } from '../pages/messages.js';
import { checkForm, CONSOLE_PATH, currentSession } from '../session.js';
import { readForm } from '../form-body.js';

const PAGE_SIZE = 50;
const pathParams = z.object({ tenant: z.string().min(1).max(64), id: z.string().min(1).max(255) });

export const consoleContext = (c: Context<ConsoleEnv>): CommandContext => ({
  principal: currentSession(c).principal,
  correlationId: c.get('requestId'),
  via: 'console',
});

/** The one-time notice, taken from the session as the page shows it. */
export function takeNotice(c: Context<ConsoleEnv>): string | null {
  const session = currentSession(c);
  const notice = session.flash;
  session.flash = null;
  return notice;
}

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

/** Waits for a later attempt that "retry now" can bring forward (the same rule as POST /commands/retry-now). */
const retryable = (message: MessageDetail, now: number): boolean =>
  !message.suspended &&
  (message.state === 'queued' || message.state === 'deferred') &&
  message.next_attempt_ts !== null &&
  message.next_attempt_ts * 1000 > now;

export function messageConsoleRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  /** One page: this node's, or in fleet mode every node's merged (the cursor holding each node's position). */
  const findPage = async (c: Context<ConsoleEnv>, query: Omit<MessageQuery, 'after'>, cursor: string | undefined) => {
    if (deps.fleetMessages) {
      const found = await deps.fleetMessages.search(consoleContext(c), query, cursor);
      return { messages: found.messages, next: found.next_cursor, missing: found.missing_nodes };
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

  const load = (c: Context<ConsoleEnv>) => {
    const { tenant, id } = validate(pathParams, c.req.param(), 'message');
    return deps.commands.detail(consoleContext(c), tenant, id);
  };

  /** This node's message, or in fleet mode the node's that holds it (shown without its actions, which act here). */
  const loadAnywhere = async (c: Context<ConsoleEnv>) => {
    try {
      return { ...load(c), node: null };
    } catch (error) {
      if (!deps.fleetMessages || !isAppError(error) || error.code !== 'NOT_FOUND') throw error;
      const { tenant, id } = validate(pathParams, c.req.param(), 'message');
      const found = await deps.fleetMessages.detail(consoleContext(c), tenant, id);
      const detail = found.detail as unknown as Omit<ReturnType<typeof load>, 'pecReceipts'> & { pec_receipts: ReturnType<typeof load>['pecReceipts'] };
      return { message: detail.message, events: detail.events, why: detail.why, pecReceipts: detail.pec_receipts, node: found.node_id };
    }
  };

  app.get('/messages/:tenant/:id', async (c) => {
    const session = currentSession(c);
    const { message, events, why, pecReceipts, node } = await loadAnywhere(c);
    const tenantId = scopeTenant(session.principal, message.tenant_id);
    const reasons = why.reasons.map((reason) => reason.code);
    return c.html(
      <MessagePage
        session={session}
        message={message}
        events={events}
        pecReceipts={pecReceipts}
        why={why}
        notice={takeNotice(c)}
        status={messageStatus(message.state, message.suspended, message.bounce_ts !== null)}
        node={node}
        headers={node === null ? deps.headers.of(tenantId, message.id) : null}
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
    if (found === null || found.view.message_id !== id) throw notFound('receipt', receiptId);
    return receiptResponse(c, found);
  });

  const actionOf = (c: Context<ConsoleEnv>): MessageAction => {
    const action = c.req.param('action');
    if (!(MESSAGE_ACTIONS as readonly string[]).includes(action ?? '')) throw new AppError('NOT_FOUND', 'no such action', { details: { action } });
    return action as MessageAction;
  };

  app.get('/messages/:tenant/:id/confirm/:action', (c) => {
    const action = actionOf(c);
    return c.html(<ConfirmPage session={currentSession(c)} message={load(c).message} action={action} />);
  });

  app.post('/messages/:tenant/:id/:action', async (c) => {
    checkForm(c, await readForm(c));
    const action = actionOf(c);
    const { message } = load(c);
    const ctx = consoleContext(c);
    const session = currentSession(c);
    const batch = message.batch_code ?? undefined;
    if ((action === 'suspend-batch' || action === 'activate-batch') && batch === undefined) throw new AppError('VALIDATION_FAILED', 'the message has no batch');
    switch (action) {
      case 'resend': {
        const result = deps.commands.resend(ctx, message.tenant_id, [message.id]);
        session.flash =
          result.resent.length === 1 ? 'Resent: the message is queued for a new attempt.' : 'Not resent: only a sent or failed message can be sent again.';
        break;
      }
      case 'retry-now': {
        const result = deps.commands.retryNow(ctx, message.tenant_id, [message.id]);
        session.flash =
          result.retried.length === 1
            ? 'Retrying now: the message is due and the dispatcher was woken.'
            : 'Not retried: the message no longer waits for a later attempt (sent, failed, in flight or held).';
        break;
      }
      case 'delete': {
        const result = deps.commands.deleteMessages(ctx, message.tenant_id, [message.id]);
        session.flash =
          result.deleted.length === 1
            ? `Deleted message ${message.id}.`
            : 'Not deleted: the message is being handed to its relay right now; try again in a moment.';
        if (result.deleted.length === 1) return c.redirect(`${CONSOLE_PATH}/messages`, 303);
        break;
      }
      case 'suspend-batch': {
        const result = await deps.commands.suspend(ctx, message.tenant_id, batch);
        session.flash = `Batch ${batch ?? ''} suspended: ${result.suspended_messages} waiting message(s) held.`;
        break;
      }
      case 'activate-batch': {
        const result = await deps.commands.activate(ctx, message.tenant_id, batch);
        session.flash = `Batch ${batch ?? ''} activated: ${result.activated_messages} message(s) released.`;
        break;
      }
    }
    return c.redirect(messageHref(message), 303);
  });

  return app;
}
