/**
 * A message's actions: each a confirmation page (GET .../confirm/:action) and a
 * POST that runs the same core command as the API, audited as `<actor>@console`.
 */
import type { Context, Hono } from 'hono';
import { AppError } from '../../../core/index.js';
import type { MessageDetail } from '../../../core/message/index.js';
import type { CommandContext } from '../../../core/tenant/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { readForm } from '../form-body.js';
import { ConfirmPage, MESSAGE_ACTIONS, type MessageAction } from '../pages/confirm.js';
import { messageHref } from '../pages/messages.js';
import { consoleContext } from '../request-context.js';
import { checkForm, CONSOLE_PATH, currentSession } from '../session.js';

/** This node's message named by the path (the actions act here only). */
export type LoadMessage = (c: Context<ConsoleEnv>) => { message: MessageDetail };

const actionOf = (c: Context<ConsoleEnv>): MessageAction => {
  const action = c.req.param('action');
  if (!(MESSAGE_ACTIONS as readonly string[]).includes(action ?? ''))
    throw new AppError('NOT_FOUND', 'no such action', { details: { action } });
  return action as MessageAction;
};

/** Runs the action on the message; answers the notice to show and whether the message is gone. */
async function perform(
  deps: ConsoleDeps,
  ctx: CommandContext,
  action: MessageAction,
  message: MessageDetail,
): Promise<{ notice: string; gone: boolean }> {
  const batch = message.batchCode ?? undefined;
  if ((action === 'suspend-batch' || action === 'activate-batch') && batch === undefined)
    throw new AppError('VALIDATION_FAILED', 'the message has no batch');
  switch (action) {
    case 'resend': {
      const result = deps.commands.resend(ctx, message.tenantId, [message.clientId]);
      const notice =
        result.resent.length === 1
          ? 'Resent: the message is queued for a new attempt.'
          : 'Not resent: only a sent or failed message can be sent again.';
      return { notice, gone: false };
    }
    case 'retry-now': {
      const result = deps.commands.retryNow(ctx, message.tenantId, [message.clientId]);
      const notice =
        result.retried.length === 1
          ? 'Retrying now: the message is due and the dispatcher was woken.'
          : 'Not retried: the message no longer waits for a later attempt (sent, failed, in flight or held).';
      return { notice, gone: false };
    }
    case 'delete': {
      const result = deps.commands.deleteMessages(ctx, message.tenantId, [message.clientId]);
      const gone = result.deleted.length === 1;
      return {
        notice: gone
          ? `Deleted message ${message.clientId}.`
          : 'Not deleted: the message is being handed to its relay right now; try again in a moment.',
        gone,
      };
    }
    case 'erase': {
      const result = deps.commands.erase(ctx, { by: 'messages', tenantId: message.tenantId, ids: [message.clientId] });
      return {
        notice:
          result.erased_messages === 1
            ? `Erased the personal data of message ${message.clientId}${result.stopped_waiting === 1 ? ': it will not be sent' : ''}.`
            : 'Nothing to erase: its personal data was erased already.',
        gone: false,
      };
    }
    case 'suspend-batch': {
      const result = await deps.commands.suspend(ctx, message.tenantId, batch);
      return {
        notice: `Batch ${batch ?? ''} suspended: ${result.suspended_messages} waiting message(s) held.`,
        gone: false,
      };
    }
    case 'activate-batch': {
      const result = await deps.commands.activate(ctx, message.tenantId, batch);
      return {
        notice: `Batch ${batch ?? ''} activated: ${result.activated_messages} message(s) released.`,
        gone: false,
      };
    }
  }
}

export function registerMessageActions(app: Hono<ConsoleEnv>, deps: ConsoleDeps, load: LoadMessage): void {
  app.get('/messages/:tenant/:id/confirm/:action', (c) => {
    const action = actionOf(c);
    return c.html(<ConfirmPage session={currentSession(c)} message={load(c).message} action={action} />);
  });

  app.post('/messages/:tenant/:id/:action', async (c) => {
    checkForm(c, await readForm(c));
    const action = actionOf(c);
    const { message } = load(c);
    const { notice, gone } = await perform(deps, consoleContext(c), action, message);
    currentSession(c).flash = notice;
    // A deleted message has no page of its own any more: back to the list.
    return c.redirect(gone ? `${CONSOLE_PATH}/messages` : messageHref(message), 303);
  });
}
